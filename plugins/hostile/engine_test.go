package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/guesttest"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// plugged is the engine's source, a plugin the test swaps between cycles.
type plugged struct {
	mu sync.Mutex
	p  *wasmhost.Plugin
}

func (s *plugged) get() *wasmhost.Plugin       { s.mu.Lock(); defer s.mu.Unlock(); return s.p }
func (s *plugged) set(p *wasmhost.Plugin)      { s.mu.Lock(); defer s.mu.Unlock(); s.p = p }
func (s *plugged) Supports(export string) bool { return s.get().Supports(export) }
func (s *plugged) ListNodes(ctx context.Context, req hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	return s.get().ListNodes(ctx, req)
}
func (s *plugged) ListInstances(ctx context.Context) ([]hostabi.Instance, error) {
	return s.get().ListInstances(ctx)
}
func (s *plugged) ConfirmDeleted(ctx context.Context, uuids []string) ([]string, []string, error) {
	return s.get().ConfirmDeleted(ctx, uuids)
}

// The daemon's view of a hostile plugin: each attack fails its cycle with
// an error naming the plugin and the failure, Placement receives no write
// derived from the failed call, and the next cycle with a sound plugin
// runs as if nothing happened.
func TestHostilePluginsNeverReachPlacement(t *testing.T) {
	fake := placementfake.New(placementfake.WithSeed(5))
	defer fake.Close()
	pc, err := placement.New(context.Background(), placement.Config{Endpoint: fake.URL(), Token: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	src := &plugged{}
	pol := engine.Policy{OwnerTrait: engine.OwnerTrait("hostile-test"), MarkerTraits: []string{"COMPUTE_NODE"}}
	eng := engine.New(src, pc, pol, engine.Options{DeleteLimit: 1}, nil, nil)

	sound := guesttest.WasmLoader(guesttest.Build(t, "../fake"), wasmhost.Options{})
	src.set(sound.OK(t, map[string]any{"nodes": 5, "seed": 9}))
	if r := eng.Cycle(context.Background()); len(r.Errors) > 0 || r.Created != 5 {
		t.Fatalf("first cycle: %+v", r)
	}
	providers := func() int {
		n := 0
		for _, req := range fake.Requests() {
			if req.Method == "POST" && req.Path == "/resource_providers" && req.Status == 201 {
				n++
			}
		}
		return n
	}
	created := providers()

	// Only the spin gets a short time limit: under load, a legitimate
	// failure (OOM, a big answer) may take longer than it to show.
	hostileWasm := guesttest.Build(t, ".")
	hostile := guesttest.WasmLoader(hostileWasm, wasmhost.Options{MemoryLimit: 64 << 20, MaxResponse: 4 << 20})
	spinning := guesttest.WasmLoader(hostileWasm, wasmhost.Options{CallTimeout: 500 * time.Millisecond})
	raw := guesttest.WasmLoader(guesttest.Build(t, "raw"), wasmhost.Options{})
	cases := []struct {
		name string
		load guesttest.Loader
		cfg  any
		want string
	}{
		{"trap", hostile, map[string]any{"attack": "trap"}, "plugin hostile: list_nodes: trapped"},
		{"panic", hostile, map[string]any{"attack": "panic"}, "plugin hostile: list_nodes: panicked"},
		{"spin", spinning, map[string]any{"attack": "spin"}, "plugin hostile: list_nodes: exceeded the time limit"},
		{"hog", hostile, map[string]any{"attack": "hog"}, "plugin hostile: list_nodes: out of memory"},
		{"huge", hostile, map[string]any{"attack": "huge", "mib": 8}, "plugin hostile: list_nodes: answer of"},
		{"ungranted service", hostile, map[string]any{"attack": "service", "service": "identity", "path": "/"}, `service "identity" is not granted`},
		{"open a file", hostile, map[string]any{"attack": "open", "target": "/etc/passwd"}, "Bad file number"},
		{"malformed", raw, "malformed", "plugin raw: list_nodes: malformed answer"},
		{"incomplete", raw, "incomplete", "plugin raw: list_nodes: answered without complete=true"},
		{"outside memory", raw, "outside", "plugin raw: list_nodes: answer at"},
		// The node listing succeeds (one decoy node) and the instances fail:
		// still nothing is written, not even the decoy's provider.
		{"instances", hostile, map[string]any{"attack": "panic", "in": "list_instances"}, "plugin hostile: list_instances: panicked"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src.set(c.load.OK(t, c.cfg))
			fake.ResetRequests()
			r := eng.Cycle(context.Background())
			if len(r.Errors) != 1 || !strings.Contains(r.Errors[0].Message, c.want) || !strings.Contains(r.Errors[0].Message, "no writes this cycle") {
				t.Fatalf("cycle errors %q, want one saying %q and no writes", r.Errors, c.want)
			}
			for _, req := range fake.Requests() {
				if req.Method != "GET" {
					t.Errorf("Placement received %s %s after a failed plugin call", req.Method, req.Path)
				}
			}
		})
	}

	// A deletion check that fails deletes nothing, though every provider's
	// node is missing from the (decoy) listing.
	t.Run("confirm_deleted", func(t *testing.T) {
		src.set(hostile.OK(t, map[string]any{"attack": "panic", "in": "confirm_deleted"}))
		fake.ResetRequests()
		r := eng.Cycle(context.Background())
		if r.Deleted != 0 || !errorsContain(r.Errors, "plugin hostile: confirm_deleted: panicked") {
			t.Fatalf("report %+v", r)
		}
		if d := fake.Find("DELETE", "/resource_providers/*"); len(d) > 0 {
			t.Fatalf("providers deleted on a failed proof: %v", d)
		}
	})

	// The daemon carries on: the sound plugin again, and all is well.
	src.set(sound.OK(t, map[string]any{"nodes": 5, "seed": 9}))
	if r := eng.Cycle(context.Background()); len(r.Errors) > 0 || r.Created+r.Updated+r.Unchanged < 5 {
		t.Fatalf("cycle after the attacks: %+v", r)
	}
	if providers() < created {
		t.Fatal("providers went missing")
	}
}

func errorsContain(errs []engine.Error, s string) bool {
	for _, e := range errs {
		if strings.Contains(e.Message, s) {
			return true
		}
	}
	return false
}
