package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
)

// memSource lists nodes from memory and proves gone the ones in gone.
type memSource struct {
	nodes []hostabi.Node
	gone  map[string]bool
}

func (s *memSource) ListNodes(context.Context, hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	return slices.Clone(s.nodes), nil
}
func (s *memSource) ListInstances(context.Context) ([]hostabi.Instance, error) { return nil, nil }
func (s *memSource) ConfirmDeleted(_ context.Context, uuids []string) (deleted, present []string, err error) {
	for _, u := range uuids {
		if s.gone[u] {
			deleted = append(deleted, u)
		} else {
			present = append(present, u)
		}
	}
	return deleted, present, nil
}

// TestUnchangedProvidersCostNoRequestOnRealPlacement: on Debian's
// Placement, a running engine's cycles send nothing for providers another
// engine owns, nor for providers it reserved because their node is gone
// but over engine.delete_limit, while their generations hold.
func TestUnchangedProvidersCostNoRequestOnRealPlacement(t *testing.T) {
	url := placementtest.Shared(t)
	ctx := context.Background()
	other := engine.OwnerTrait(fmt.Sprintf("other-%x", os.Getpid()))
	if st, b := placementDo(t, url, "PUT", "/traits/"+other, nil); st != 201 && st != 204 {
		t.Fatalf("create trait: %d %s", st, b)
	}
	src := &memSource{gone: map[string]bool{}}
	for i := range 8 {
		src.nodes = append(src.nodes, hostabi.Node{UUID: uuidFor(t.Name(), i), ResourceClass: "gold",
			PowerState: "power off", ProvisionState: "available"})
	}
	for i := range 4 { // 0-3: another engine's
		foreignProvider(t, url, uuidFor(t.Name(), i), other)
	}
	pc, err := placement.New(ctx, placement.Config{Endpoint: url, Token: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	pol := engine.Policy{OwnerTrait: engine.OwnerTrait(fmt.Sprintf("quiet-%x", os.Getpid()))}
	eng := engine.New(src, pc, pol, engine.Options{DeleteLimit: 0.1}, nil, nil)
	if r := eng.Cycle(ctx); r.Created != 4 {
		t.Fatalf("first cycle: %+v", r.ErrorMessages())
	}
	if r := eng.Cycle(ctx); r.PlacementRequests != 2 {
		t.Fatalf("foreign providers unchanged: %d requests, want 2 (our listing, theirs): %v", r.PlacementRequests, r.ErrorMessages())
	}
	// Nodes 4-7 are deleted at the source: over the limit of 1 a cycle.
	src.nodes = src.nodes[:4]
	for i := 4; i < 8; i++ {
		src.gone[uuidFor(t.Name(), i)] = true
	}
	eng.Cycle(ctx) // first proof
	if r := eng.Cycle(ctx); r.Blocked != 4 {
		t.Fatalf("second proof: %+v", r)
	}
	if p, _ := readProvider(t, url, uuidFor(t.Name(), 5)); p.Inventories["CUSTOM_GOLD"].Reserved != 1 {
		t.Fatalf("blocked provider not reserved: %+v", p)
	}
	for range 2 {
		if r := eng.Cycle(ctx); r.PlacementRequests != 2 || r.Blocked != 4 {
			t.Fatalf("unchanged foreign and blocked providers: %d requests, want 2; blocked %d", r.PlacementRequests, r.Blocked)
		}
	}
}

// foreignProvider creates a provider carrying another engine's marker.
func foreignProvider(t *testing.T, url, uuid, owner string) {
	t.Helper()
	st, b := placementDo(t, url, "POST", "/resource_providers", map[string]any{"uuid": uuid, "name": "foreign-" + uuid})
	if st != 200 {
		t.Fatalf("create provider: %d %s", st, b)
	}
	var p struct{ Generation int }
	json.Unmarshal(b, &p)
	if st, b := placementDo(t, url, "PUT", "/resource_providers/"+uuid+"/traits",
		map[string]any{"resource_provider_generation": p.Generation, "traits": []string{owner}}); st != 200 {
		t.Fatalf("owner trait: %d %s", st, b)
	}
}
