package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// scripted runs the engine in this process with the fake plugin in Wasm,
// configured with a scripted world, against the real Placement.
type scripted struct {
	t   *testing.T
	url string
	eng *engine.Engine
}

func newScripted(t *testing.T, world map[string]any) *scripted {
	t.Helper()
	url := placementtest.Shared(t)
	raw, _ := json.Marshal(world)
	p, err := wasmhost.Load(context.Background(), plugintest.Build(t, "plugins/fake"), raw,
		wasmhost.Options{CacheDir: plugintest.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	pc, err := placement.New(context.Background(), placement.Config{Endpoint: url, Token: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	pol := engine.Policy{OwnerTrait: engine.OwnerTrait(fmt.Sprintf("script-%x-%s", os.Getpid(), t.Name()))}
	eng := engine.New(p, pc, pol, engine.Options{DeleteLimit: 1}, nil, nil)
	return &scripted{t, url, eng}
}

func (s *scripted) cycle() engine.Report {
	s.t.Helper()
	r := s.eng.Cycle(context.Background())
	if len(r.Errors) > 0 {
		s.t.Fatalf("cycle errors: %v", r.Errors)
	}
	return r
}

func (s *scripted) reserved(uuid string) int64 {
	s.t.Helper()
	p, ok := readProvider(s.t, s.url, uuid)
	if !ok {
		s.t.Fatalf("provider %s is missing", uuid)
	}
	return p.Inventories["CUSTOM_GOLD"].Reserved
}

func freeNode(uuid string) map[string]any {
	return map[string]any{"uuid": uuid, "resource_class": "gold", "power_state": "power on", "provision_state": "available"}
}

// Bug 1841481: an instance scheduled while the node listing runs. nova
// read instances first, saw the node occupied by a stranger, orphaned it
// and deleted its provider. Here the node is reserved at once and nothing
// is ever deleted.
func TestScriptedInstanceLandsDuringTheNodeListing(t *testing.T) {
	u := func(i int) string { return uuidFor(t.Name(), i) }
	inst := uuidFor(t.Name(), 100)
	s := newScripted(t, map[string]any{
		"node": []any{freeNode(u(0)), freeNode(u(1))},
		"step": []any{map[string]any{"cycle": 2, "when": "during", "land": map[string]any{"uuid": inst, "node_uuid": u(1)}}},
	})
	if r := s.cycle(); r.Created != 2 || s.reserved(u(1)) != 0 {
		t.Fatalf("cycle 1: %+v", r)
	}
	// Cycle 2: the node snapshot says free, the instance list (read after
	// it) says occupied.
	if r := s.cycle(); r.Instances != 1 || r.Deleted != 0 || s.reserved(u(1)) != 1 {
		t.Fatalf("cycle 2: %+v reserved %d", r, s.reserved(u(1)))
	}
	// Cycle 3: the node itself now shows the instance.
	if r := s.cycle(); r.Deleted != 0 || r.Unchanged != 2 || s.reserved(u(1)) != 1 || s.reserved(u(0)) != 0 {
		t.Fatalf("cycle 3: %+v", r)
	}
}

// A node deleted and enrolled again with the same uuid: a short absence
// deletes nothing (one proof); a long one deletes the provider after two
// proofs, and re-enrolment recreates it.
func TestScriptedNodeDeletedAndReenrolled(t *testing.T) {
	u := func(i int) string { return uuidFor(t.Name(), i) }
	again := freeNode(u(0))
	s := newScripted(t, map[string]any{
		"node": []any{freeNode(u(0)), freeNode(u(1))},
		"step": []any{
			map[string]any{"cycle": 2, "when": "before", "delete": u(0)},
			map[string]any{"cycle": 3, "when": "before", "enroll": again},
			map[string]any{"cycle": 4, "when": "before", "delete": u(0)},
			map[string]any{"cycle": 6, "when": "before", "enroll": again},
		},
	})
	want := []struct{ created, deleted int }{{2, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 1}, {1, 0}}
	for i, w := range want {
		r := s.cycle()
		if r.Created != w.created || r.Deleted != w.deleted {
			t.Fatalf("cycle %d: created %d deleted %d, want %d and %d", i+1, r.Created, r.Deleted, w.created, w.deleted)
		}
		_, exists := readProvider(t, s.url, u(0))
		if gone := i+1 == 5; exists == gone {
			t.Fatalf("cycle %d: provider exists=%v", i+1, exists)
		}
		if _, ok := readProvider(t, s.url, u(1)); !ok {
			t.Fatalf("cycle %d: the untouched node lost its provider", i+1)
		}
	}
}
