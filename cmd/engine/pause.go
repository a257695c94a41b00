package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/ops"
	"github.com/rpengine/rpengine/internal/ops/daemon"
)

// engine pause NODE --for 2h --reason "..." and engine resume NODE: an
// operator's pause of one provider (engine/pause.go), asked of the
// running daemon through its local API with a proof of its API key.

const pauseUsage = "NODE [--for DURATION] [--reason TEXT] [--config FILE]"

// pauseThrough runs a pause or a resume on the setup in use, between
// cycles, for the local API.
func pauseThrough(asks chan<- daemon.Ask) (func(context.Context, string, time.Time, string) error, func(context.Context, string) error) {
	act := func(ctx context.Context, do func(context.Context, *engine.Engine) error) error {
		res := make(chan error, 1)
		ask := func(loop context.Context, s daemon.Setup) {
			w, ok := unwrap(s).(*daemonSetup)
			if !ok {
				res <- ops.ErrNotReady
				return
			}
			res <- do(loop, w.eng)
		}
		select {
		case asks <- ask:
		case <-ctx.Done():
			return fmt.Errorf("waiting for the cycle in flight to end: %w", ctx.Err())
		}
		err := <-res
		if errors.Is(err, engine.ErrBadPause) {
			return ops.PauseError(err)
		}
		return err
	}
	pause := func(ctx context.Context, node string, until time.Time, reason string) error {
		return act(ctx, func(c context.Context, e *engine.Engine) error {
			u, err := nodeUUID(c, e, node)
			if err != nil {
				return err
			}
			return e.Pause(c, u, until, reason)
		})
	}
	resume := func(ctx context.Context, node string) error {
		return act(ctx, func(c context.Context, e *engine.Engine) error {
			u, err := nodeUUID(c, e, node)
			if err != nil {
				return err
			}
			return e.Resume(c, u)
		})
	}
	return pause, resume
}

// nodeUUID is node's uuid: node itself, or the uuid of the one node of
// that name in a plan (the source's listing now; a plan writes nothing).
func nodeUUID(ctx context.Context, e *engine.Engine, node string) (string, error) {
	if hostabi.ValidUUID(strings.ToLower(node)) {
		return node, nil
	}
	var found []string
	for _, o := range e.Plan(ctx).Outcomes {
		if o.Name == node && !slices.Contains(found, o.Node) {
			found = append(found, o.Node)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("%w: no node named %q in the source's listing", engine.ErrBadPause, node)
	}
	return "", fmt.Errorf("%w: %d nodes are named %q; give its uuid", engine.ErrBadPause, len(found), node)
}

// cmdPause is `engine pause` (resume false) and `engine resume`.
func cmdPause(ctx context.Context, argv []string, resume bool, out io.Writer, log *slog.Logger) error {
	name := map[bool]string{false: "pause", true: "resume"}[resume]
	fs := flag.NewFlagSet(prog+" "+name, flag.ContinueOnError)
	fs.SetOutput(out)
	cfgPath := fs.String("config", "", "the config file (TOML); default $RPENGINE_CONFIG, then "+defaultConfig)
	var forD time.Duration
	var reason string
	if !resume {
		fs.DurationVar(&forD, "for", time.Hour, "how long the operator means the pause to last; past it the pause holds and is reported overdue")
		fs.StringVar(&reason, "reason", "", "why, for the status page, explain and the log (at most 200 bytes)")
	}
	node, err := parseOperand(fs, argv)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(configPath(*cfgPath, os.Getenv))
	if err != nil {
		return err
	}
	path := "/api/v1/" + name + "/" + url.PathEscape(node)
	if !resume {
		path += "?" + url.Values{"until": {time.Now().Add(forD).UTC().Format(time.RFC3339)}, "reason": {reason}}.Encode()
	}
	var a ops.PauseAnswer
	if err := askDaemon(ctx, cfg.Server.Listen, apiKeyPath(cfg), path, &a); err != nil {
		return err
	}
	if a.Paused {
		fmt.Fprintf(out, "%s paused until %s (the daemon writes nothing to it until %s resume)\n", a.Node, a.Until.Format(time.RFC3339), prog)
	} else {
		fmt.Fprintf(out, "%s resumed: the next cycle applies the rules\n", a.Node)
	}
	return nil
}

// parseOperand parses fs over argv, whose one operand (the node) may
// come before or among the flags.
func parseOperand(fs *flag.FlagSet, argv []string) (string, error) {
	var node string
	for {
		if err := fs.Parse(argv); err != nil {
			return "", fmt.Errorf("%w: %v", errUsage, err)
		}
		if fs.NArg() == 0 {
			break
		}
		if node != "" {
			return "", fmt.Errorf("%w: one node, not %q and %q", errUsage, node, fs.Arg(0))
		}
		node, argv = fs.Arg(0), fs.Args()[1:]
	}
	if node == "" {
		return "", fmt.Errorf("%w: which node? give its uuid or name", errUsage)
	}
	return node, nil
}

// askDaemon POSTs path to the daemon at listen with a proof of the API
// key at keyPath, and decodes its answer.
func askDaemon(ctx context.Context, listen, keyPath, path string, v any) error {
	if listen == "" || keyPath == "" {
		return errors.New("a pause is asked of the running daemon: set server.listen and a state file (its API key lives beside it)")
	}
	key, err := os.ReadFile(keyPath)
	if err != nil {
		return fmt.Errorf("the daemon's API key: %w (run as the engine's user, with the daemon running)", err)
	}
	addr := dialAddr(listen)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set(ops.RequestProofHeader, ops.RequestProof(key, http.MethodPost, path, time.Now().Unix()))
	resp, err := (&http.Client{Timeout: ops.PlanTimeout}).Do(req)
	if err != nil {
		return fmt.Errorf("no daemon answers at %s: %w", addr, err)
	}
	defer resp.Body.Close()
	body := io.LimitReader(resp.Body, 1<<20)
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		json.NewDecoder(body).Decode(&e)
		return fmt.Errorf("the daemon at %s: %s: %s", addr, resp.Status, e.Error)
	}
	return json.NewDecoder(body).Decode(v)
}
