package e2e

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// claimedClassChange: the scheduler has claimed a node (an instance's
// allocation on its class, the deploy not begun) when an operator
// changes its class. nova's inventory write is refused while the claim
// holds the old class; the engine keeps the node off the new class; no
// poll of allocation_candidates sees it offered under either until the
// claim goes, and then it is offered under the new class.
func (r *novaRig) claimedClassChange() {
	t := r.t
	u := r.kinds["free"][0]
	const instance = "c1a10000-0000-4000-8000-000000000001"
	body := map[string]any{"allocations": map[string]any{u: map[string]any{"resources": map[string]int{r.rc[u]: 1}}},
		"project_id": "e2e", "user_id": "e2e", "consumer_generation": nil, "consumer_type": "INSTANCE"}
	if code, b := placementDo(t, r.placement, "PUT", "/allocations/"+instance, body); code != 204 {
		t.Fatalf("scheduler claim: %d %s", code, b)
	}
	r.pending[u] = true
	p := r.pollCandidates(u)
	r.ironic.SetResourceClass(t, u, "baremetal-bronze")
	r.rc[u] = "CUSTOM_BAREMETAL_BRONZE"
	before := len(r.nova.Errors())
	r.novaStep("claimed node's class change", false, false)
	// nova's write of the new class is refused while the claim holds the
	// old one: the documented line, with the traceback that follows it.
	refused := r.nova.Errors()[before:]
	if !slices.ContainsFunc(refused, func(l string) bool {
		return strings.Contains(l, "Failed to update inventory") && strings.Contains(l, "placement.inventory.inuse")
	}) {
		t.Fatalf("nova's refused write at the claimed node's class change is not the documented line: %v", refused)
	}
	r.documented = append(r.documented, refused...)
	ew, rep := r.engineStep("claimed node's class change")
	t.Logf("FIGURE claimed class change: engine %d writes %v, nova %+v", len(ew), ew, rep.Nova)
	again := len(r.nova.Errors())
	r.novaStep("claimed node's class change, refresh", false, true)
	// nova's refresh may try again while the claim holds: the same refusal.
	if more := r.nova.Errors()[again:]; len(more) > 0 {
		if !slices.ContainsFunc(more, func(l string) bool { return strings.Contains(l, "placement.inventory.inuse") }) {
			t.Fatalf("nova logged at its refresh beside the claim: %v", more)
		}
		r.documented = append(r.documented, more...)
	}
	r.engineStep("claimed node's class change, again")
	polls, seen := p.stop()
	t.Logf("FIGURE claimed class change: %d polls, %d saw the claimed node offered", polls, len(seen))
	if polls == 0 || len(seen) > 0 {
		t.Fatalf("claimed class change: %d polls, offered: %v", polls, seen)
	}
	if code, b := placementDo(t, r.placement, "DELETE", "/allocations/"+instance, nil); code != 204 {
		t.Fatalf("the claim goes: %d %s", code, b)
	}
	r.pending[u], r.reserve[u] = false, false // the rules no longer reserve it: offered from now on is right
	for round := range 3 {
		r.novaStep("after the claim went", false, round > 0)
		r.engineStep("after the claim went")
		if offered, _ := offeredNow(r.placement, "CUSTOM_BAREMETAL_BRONZE"); offered[u] {
			t.Logf("FIGURE claimed class change: offered under the new class %d rounds after the claim went", round+1)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("claimed class change: %s not offered under its new class after the claim went (inventory %v)", u, r.inventoryOf(u))
}

// inventoryOf is a node's provider's inventory classes, for messages.
func (r *novaRig) inventoryOf(u string) []string {
	p, _ := readProvider(r.t, r.placement, u)
	var out []string
	for rc, inv := range p.Inventories {
		out = append(out, fmt.Sprintf("%s total %d reserved %d", rc, inv.Total, inv.Reserved))
	}
	slices.Sort(out)
	return out
}
