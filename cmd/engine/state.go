package main

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/redact"
)

// openState loads the engine's state from engine.state_file, or from the
// default place when it is unset, and records the negotiated microversion
// there for the next process. A file that cannot hold the ownership record
// is fatal: writing without it could leave stale traits after a crash.
func (c *cloud) openState(cfg *config.Config, log *slog.Logger) (*engine.State, error) {
	path := statePath(cfg.Engine.StateFile, cfg.Engine.ID, c.placement)
	st, err := engine.LoadState(path, c.stateKey(cfg))
	if errors.Is(err, engine.ErrStateUnusable) {
		return nil, fmt.Errorf("engine.state_file: %w", err)
	}
	if err != nil {
		// A file from before keys were redacted may quote a credential.
		log.Warn("state cache ignored", "err", redact.Text(err.Error(), c.placement))
	}
	c.microversion = st.Microversion()
	return st, nil
}

// statePath is the configured path; "none" keeps the state in memory; ""
// takes the default: systemd's $STATE_DIRECTORY, else $XDG_STATE_HOME or
// ~/.local/state, under rpengine/, one file per engine id and Placement
// endpoint, so that a fresh `engine once` is one request when idle.
func statePath(configured, id, endpoint string) string {
	switch configured {
	case "none":
		return ""
	case "":
	default:
		return configured
	}
	dir, _, _ := strings.Cut(os.Getenv("STATE_DIRECTORY"), ":")
	if dir == "" {
		base := os.Getenv("XDG_STATE_HOME")
		if base == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "" // nowhere to keep it: memory only
			}
			base = filepath.Join(home, ".local", "state")
		}
		dir = filepath.Join(base, "rpengine")
	}
	sum := sha256.Sum256([]byte(endpoint))
	return filepath.Join(dir, fmt.Sprintf("%s-%x.json", strings.ToLower(engine.OwnerTrait(id)[len(engine.OwnerTraitPrefix):]), sum[:6]))
}
