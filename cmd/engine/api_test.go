package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/ops"
)

type onePlan struct{}

func (onePlan) Report(node string) (any, error) {
	if node != "" {
		return nil, unknownNode{"node " + node + ": not in scope"}
	}
	return engine.Report{Nodes: 7, Errors: []engine.Error{}}, nil
}

func (onePlan) Explain(context.Context, string) (any, error) { return nil, ops.ErrUnknownNode }

// A verb asks the daemon only when the one on server.listen is its own
// engine's, proves the key it wrote beside the state file, and can plan;
// otherwise it reads the state itself.
func TestFromDaemonAsksOnlyItsOwnEngine(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.json")
	o := ops.New(nil)
	o.Configure(ops.Info{EngineID: "az1"})
	addrs, stop, err := o.ServeWith(ops.ServeConfig{Listen: "127.0.0.1:0"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	cfg := func(id string) *config.Config {
		c := &config.Config{}
		c.Engine.ID, c.Server.Listen, c.Engine.StateFile = id, addrs[0], state
		return c
	}
	ctx := context.Background()
	key, err := newAPIKey(apiKeyPath(cfg("az1")))
	if fi, serr := os.Stat(state + ".api-key"); err != nil || serr != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the key: %v, %v, %v", err, serr, fi)
	}
	var r engine.Report
	if asked, _, err := fromDaemon(ctx, cfg("az1"), "plan", &r, discard); asked || err != nil {
		t.Fatalf("before the daemon can plan (503): asked %v, %v", asked, err)
	}
	// An impostor: the right engine id, no key (or another one).
	o.SetAPI(&ops.API{Plan: func(context.Context) (ops.Plan, error) { return onePlan{}, nil }, Key: []byte("guessed")})
	if asked, _, err := fromDaemon(ctx, cfg("az1"), "plan", &r, discard); asked || err != nil || r.Nodes != 0 {
		t.Fatalf("an answer without the key's proof: asked %v, %v, %+v", asked, err, r)
	}
	o.SetAPI(&ops.API{Plan: func(context.Context) (ops.Plan, error) { return onePlan{}, nil }, Key: key})
	if asked, _, err := fromDaemon(ctx, cfg("az2"), "plan", &r, discard); asked || err != nil {
		t.Fatalf("another engine's daemon: asked %v, %v", asked, err)
	}
	if asked, addr, err := fromDaemon(ctx, cfg("az1"), "plan", &r, discard); !asked || err != nil || r.Nodes != 7 || addr != addrs[0] {
		t.Fatalf("its own daemon: asked %v at %s, %v, %+v", asked, addr, err, r)
	}
	if asked, _, err := fromDaemon(ctx, cfg("az1"), "plan?node=x", &r, discard); !asked || !errors.Is(err, ops.ErrUnknownNode) {
		t.Fatalf("unknown node: asked %v, %v", asked, err)
	}
	withTLS := cfg("az1")
	withTLS.Server.WebConfigFile = "web.yml"
	if asked, _, err := fromDaemon(ctx, withTLS, "plan", &r, discard); asked || err != nil {
		t.Fatalf("with a web config: asked %v, %v", asked, err)
	}
	stop()
	if asked, _, err := fromDaemon(ctx, cfg("az1"), "plan", &r, discard); asked || err != nil {
		t.Fatalf("nobody listening: asked %v, %v", asked, err)
	}
}

var discard = slog.New(slog.DiscardHandler)

func TestDialAddr(t *testing.T) {
	for in, want := range map[string]string{
		":9180": "127.0.0.1:9180", "0.0.0.0:9180": "127.0.0.1:9180", "[::]:9180": "127.0.0.1:9180",
		"10.1.2.3:9180": "10.1.2.3:9180", "localhost:9180": "localhost:9180",
	} {
		if got := dialAddr(in); got != want {
			t.Errorf("dialAddr(%q) = %q, want %q", in, got, want)
		}
	}
}

// The key's file: beside a configured state file, in the default state
// directory otherwise, none without a state file.
func TestAPIKeyPath(t *testing.T) {
	t.Setenv("STATE_DIRECTORY", "/var/lib/rpengine")
	for state, want := range map[string]string{"/x/state.json": "/x/state.json.api-key", "": "/var/lib/rpengine/az1.api-key", "none": ""} {
		c := &config.Config{}
		c.Engine.ID, c.Engine.StateFile = "AZ1", state
		if got := apiKeyPath(c); got != want {
			t.Errorf("state_file %q: %q, want %q", state, got, want)
		}
	}
}
