package soak

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// The Wasm mode: the engine's source is the real fake plugin running in
// the plugin host, reading the world from the harness over HTTP (its
// config key world = "world", a granted service). The world service
// applies the same faults and mid-listing events as the in-memory source;
// plugin traps come from a second, faulty instance per operation.

// wasmSource dispatches each call to the healthy plugin, or to the faulty
// one when the cycle's plan traps that operation.
type wasmSource struct {
	r      *Runner
	main   *wasmhost.Plugin
	faulty map[string]*wasmhost.Plugin // by operation: fault = "panic" there
}

func (s *wasmSource) pick(op string) *wasmhost.Plugin {
	if s.r.plan != nil && s.r.plan.trapIn == op {
		return s.faulty[op]
	}
	return s.main
}

func (s *wasmSource) ListNodes(ctx context.Context, req hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	return s.pick("list_nodes").ListNodes(ctx, req)
}

func (s *wasmSource) ListInstances(ctx context.Context) ([]hostabi.Instance, error) {
	return s.pick("list_instances").ListInstances(ctx)
}

func (s *wasmSource) ConfirmDeleted(ctx context.Context, uuids []string) (deleted, present []string, err error) {
	return s.pick("confirm_deleted").ConfirmDeleted(ctx, uuids)
}

// Supports tells the engine the plugin proves deletion.
func (s *wasmSource) Supports(export string) bool { return s.main.Supports(export) }

func (r *Runner) wasmSource() (engine.Source, func(), error) {
	if r.cfg.Plugin == "" {
		return nil, nil, errors.New("soak: wasm mode needs the fake plugin's .wasm file")
	}
	world := httptest.NewServer(http.HandlerFunc(r.serveWorld))
	opts := wasmhost.Options{
		CallTimeout: r.cfg.SourceTimeout, CacheDir: r.cfg.CacheDir,
		Services: map[string]string{"world": world.URL},
	}
	ctx := context.Background()
	load := func(extra map[string]any) (*wasmhost.Plugin, error) {
		cfg := map[string]any{"world": "world"}
		for k, v := range extra {
			cfg[k] = v
		}
		b, _ := json.Marshal(cfg)
		return wasmhost.Load(ctx, r.cfg.Plugin, b, opts)
	}
	s := &wasmSource{r: r, faulty: map[string]*wasmhost.Plugin{}}
	closeAll := func() {
		for _, p := range append([]*wasmhost.Plugin{s.main}, values(s.faulty)...) {
			if p != nil {
				p.Close(ctx)
			}
		}
		world.Close()
	}
	var err error
	if s.main, err = load(nil); err != nil {
		closeAll()
		return nil, nil, fmt.Errorf("soak: load %s: %w", r.cfg.Plugin, err)
	}
	for _, op := range []string{"list_nodes", "list_instances", "confirm_deleted"} {
		if s.faulty[op], err = load(map[string]any{"fault": "panic", "fault_in": op}); err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("soak: load the faulty plugin: %w", err)
		}
	}
	return s, closeAll, nil
}

// serveWorld is the world service the plugin reads.
func (r *Runner) serveWorld(w http.ResponseWriter, req *http.Request) {
	var v any
	var err error
	switch {
	case req.URL.Path == "/nodes" && req.URL.Query().Get("for") == "confirm_deleted":
		var nodes []hostabi.Node
		nodes, err = r.serveConfirmList()
		v = map[string]any{"nodes": nodes}
	case req.URL.Path == "/nodes":
		var nodes []hostabi.Node
		nodes, err = r.serveNodes(hostabi.ListNodesRequest{})
		v = map[string]any{"nodes": nodes}
	case req.URL.Path == "/instances":
		var in []hostabi.Instance
		in, err = r.serveInstances()
		v = map[string]any{"instances": in}
	default:
		http.NotFound(w, req)
		return
	}
	if errors.Is(err, errOverrun) {
		// Past the plugin's time limit: the host kills the call.
		select {
		case <-time.After(r.cfg.SourceTimeout + 200*time.Millisecond):
		case <-req.Context().Done():
		}
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// serveConfirmList is the truthful world the plugin's confirm_deleted
// judges by: every enrolled node, ungarbled.
func (r *Runner) serveConfirmList() ([]hostabi.Node, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.plan
	if err := sourceFault(p.confirmErr, p.timeoutIn == "confirm_deleted", "confirm_deleted"); err != nil {
		return nil, err
	}
	var out []hostabi.Node
	for _, n := range r.w.nodes {
		if n.enrolled {
			out = append(out, hostabi.Node{UUID: n.UUID})
		} else {
			r.proved(n.UUID) // the plugin proves deleted what is not here
		}
	}
	return out, nil
}

func values[K comparable, V any](m map[K]V) []V {
	out := make([]V, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// DefaultCacheDir is where compiled plugins are kept between runs.
func DefaultCacheDir() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "rpengine", "wazero")
	}
	return ""
}
