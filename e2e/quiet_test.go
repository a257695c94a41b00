package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

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

// stepClock is a clock the test moves by hand.
type stepClock struct{ now time.Time }

func (c *stepClock) Now() time.Time { return c.now }

// TestBlockedInUseProviderCostsNoRequestOnRealPlacement: on Debian's
// Placement, a provider of a node proven gone that still has an
// allocation is reserved and blocked, then costs no request while its
// generation holds, until engine.delete_grace has passed. DELETE
// /allocations/{consumer} frees it without moving its generation, which
// is why the grace, not the generation, says when to look again.
func TestBlockedInUseProviderCostsNoRequestOnRealPlacement(t *testing.T) {
	url := placementtest.Shared(t)
	ctx := context.Background()
	src := &memSource{gone: map[string]bool{}}
	for i := range 2 {
		src.nodes = append(src.nodes, hostabi.Node{UUID: uuidFor(t.Name(), i), ResourceClass: "gold",
			PowerState: "power off", ProvisionState: "available"})
	}
	pc, err := placement.New(ctx, placement.Config{Endpoint: url, Token: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	clock := &stepClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	pol := engine.Policy{OwnerTrait: engine.OwnerTrait(fmt.Sprintf("inuse-%x", os.Getpid()))}
	eng := engine.New(src, pc, pol, engine.Options{DeleteLimit: 1, DeleteGrace: time.Minute, Clock: clock}, nil, nil)
	if r := eng.Cycle(ctx); r.Created != 2 {
		t.Fatalf("first cycle: %v", r.ErrorMessages())
	}
	u, consumer := uuidFor(t.Name(), 1), uuidFor(t.Name(), 100)
	if code, body := placementDo(t, url, "PUT", "/allocations/"+consumer, map[string]any{
		"allocations": map[string]any{u: map[string]any{"resources": map[string]int{"CUSTOM_GOLD": 1}}},
		"project_id":  "p", "user_id": "u", "consumer_generation": nil, "consumer_type": "INSTANCE"}); code != 204 {
		t.Fatalf("allocation: %d %s", code, body)
	}
	src.nodes, src.gone[u] = src.nodes[:1], true
	eng.Cycle(ctx) // first proof
	clock.now = clock.now.Add(time.Minute)
	if r := eng.Cycle(ctx); r.Blocked != 1 {
		t.Fatalf("second proof: blocked %d: %v", r.Blocked, r.ErrorMessages())
	}
	clock.now = clock.now.Add(20 * time.Second)
	if r := eng.Cycle(ctx); r.PlacementRequests != 1 || r.Blocked != 1 {
		t.Fatalf("within the grace: %d requests, want 1 (the listing); blocked %d", r.PlacementRequests, r.Blocked)
	}
	var before, after struct{ Generation int }
	placementGet(t, url, "/resource_providers/"+u, &before)
	if code, body := placementDo(t, url, "DELETE", "/allocations/"+consumer, nil); code != 204 {
		t.Fatalf("free the allocation: %d %s", code, body)
	}
	if placementGet(t, url, "/resource_providers/"+u, &after); after.Generation != before.Generation {
		t.Fatalf("DELETE /allocations moved the generation %d -> %d: the grace is not needed", before.Generation, after.Generation)
	}
	if r := eng.Cycle(ctx); r.PlacementRequests != 1 || r.Deleted != 0 {
		t.Fatalf("freed, within the grace: %d requests, deleted %d", r.PlacementRequests, r.Deleted)
	}
	clock.now = clock.now.Add(40 * time.Second)
	if r := eng.Cycle(ctx); r.Deleted != 1 {
		t.Fatalf("after the grace: deleted %d: %v", r.Deleted, r.ErrorMessages())
	}
}
