package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path"
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
// A plan (snapshot) reads it without the lock, whether or not `engine
// run` holds it, and never saves it (docs/OPERATIONS.md).
func (c *cloud) openState(cfg *config.Config, log *slog.Logger, snapshot bool) (*engine.State, error) {
	path := statePath(cfg.Engine.StateFile, cfg.Engine.ID, c.placement)
	if cfg.Engine.StateFile == "" && !snapshot {
		adoptLegacyState(path, defaultStateFile(cfg.Engine.ID, c.placement), log)
	}
	// A file written before keys were normalised names the URL as spelt.
	also := c.placement + " " + cfg.Engine.ID
	load := engine.LoadState
	if snapshot {
		load = engine.SnapshotState
	}
	st, err := load(path, c.stateKey(cfg), also)
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
	return defaultStateFile(id, placementKey(endpoint))
}

// defaultStateFile is the default place of the file of engine id for the
// Placement named key.
func defaultStateFile(id, key string) string {
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
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(dir, fmt.Sprintf("%s-%x.json", strings.ToLower(engine.OwnerTrait(id)[len(engine.OwnerTraitPrefix):]), sum[:6]))
}

// placementKey is the endpoint as the state file's key and name: one
// Placement URL however it is spelt — the case of its scheme and host, a
// default port, a trailing or doubled slash, a query or fragment. Another
// host name or proxy is another spelling no parse can see through: set
// engine.state_file to keep the file then, and with [coord] etcd the
// shared record follows the Placement itself (coord_record.go).
func placementKey(endpoint string) string {
	u, err := url.Parse(strings.TrimSpace(endpoint))
	if err != nil || u.Host == "" {
		return strings.TrimRight(strings.TrimSpace(endpoint), "/")
	}
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	if port := u.Port(); port == "80" && u.Scheme == "http" || port == "443" && u.Scheme == "https" {
		u.Host = u.Hostname()
		if strings.Contains(u.Host, ":") {
			u.Host = "[" + u.Host + "]"
		}
	}
	u.Path = strings.TrimRight(path.Clean("/"+u.Path), "/")
	u.RawPath, u.RawQuery, u.Fragment, u.User, u.ForceQuery = "", "", "", nil, false
	return u.String()
}

// adoptLegacyState renames the default file of an older version (named
// after the endpoint as spelt) to the normalised name, once: losing it
// would lose the ownership record.
func adoptLegacyState(path, legacy string, log *slog.Logger) {
	if path == "" || legacy == path {
		return
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		return
	}
	if _, err := os.Stat(legacy); err != nil {
		return
	}
	if err := os.Rename(legacy, path); err != nil {
		log.Warn("state file of an older version not renamed; its record is not read", "from", legacy, "to", path, "err", err)
		return
	}
	log.Info("state file renamed to its normalised name", "from", legacy, "to", path)
}

// snapshotSetup is setup for a verb that only reads (audit): the state
// file is read without its lock, beside `engine run`, and never saved.
func snapshotSetup(ctx context.Context, path string, log *slog.Logger) (*assembly, error) {
	cfg, err := loadConfig(path)
	if err != nil {
		return nil, err
	}
	return build(ctx, cfg, log, nil, true)
}
