package engine_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine/placement"
)

// A shared entry is evidence, not authority: whatever a stranger puts
// under the record's prefix, the engine writes nothing to a provider it
// cannot vouch for, and keeps what an operator put on its own providers.
func TestForgedSharedEntriesLeadToNoWrites(t *testing.T) {
	a := newRig(t, 2)
	store := &memStore{entries: map[string][]byte{}}
	a.eng.ShareRecord(store, false)
	a.cleanCycle()
	nova, filled, own := plantForgeries(t, a, store)
	a.restart() // the next process reads the store first
	a.eng.ShareRecord(store, true)
	a.fake.ResetRequests()
	for i := range 3 {
		rep := a.cycle()
		for _, e := range rep.Errors {
			t.Errorf("cycle error: %+v", e)
		}
		w := strings.Join(rep.Warnings, "\n")
		said := strings.Contains(w, "4 shared record entries ignored") && strings.Contains(w, "2 shared record entries unreadable")
		if said != (i == 0) {
			t.Errorf("cycle %d: warnings %q", i, rep.Warnings)
		}
	}
	for _, u := range []string{nova, filled, own, nodeUUID(1)} {
		for _, r := range a.fake.Requests() {
			if r.Method != "GET" && strings.Contains(r.Path, u) {
				t.Errorf("%s %s: a forged entry led to a write", r.Method, r.Path)
			}
		}
	}
	for _, u := range []string{own, nodeUUID(1)} {
		if p := a.provider(u); !slices.Contains(p.Traits, "CUSTOM_OPERATOR") {
			t.Errorf("%s lost the operator's trait: %v", u, p.Traits)
		}
	}
	if p, ok := a.fake.Provider(nova); !ok || slices.Contains(p.Traits, a.ownerT) {
		t.Errorf("the compute node was taken or deleted: %+v %v", p, ok)
	}
}

// plantForgeries puts into store the entries a stranger could write, and
// into Placement what they name: a nova-style compute node nobody lists,
// an unmarked provider with an inventory, and an operator's trait on two
// of a's providers.
func plantForgeries(t *testing.T, a *rig, store *memStore) (nova, filled, own string) {
	ctx := context.Background()

	// A nova-style compute node nobody lists, and an unmarked provider
	// holding an inventory: a forged pending creation names each.
	nova, filled = "11111111-0000-4000-8000-000000000001", "11111111-0000-4000-8000-000000000002"
	for _, u := range []string{nova, filled} {
		if err := a.fake.CreateProvider(u, "host-"+u[len(u)-1:]); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.fake.AddTrait(nova, "COMPUTE_NODE"); err != nil {
		t.Fatal(err)
	}
	gen, _, err := a.pc.Inventories(ctx, filled)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.pc.SetInventories(ctx, filled, gen, map[string]placement.Inventory{"VCPU": {Total: 64, MinUnit: 1, MaxUnit: 64, StepSize: 1, AllocationRatio: 1}}); err != nil {
		t.Fatal(err)
	}
	// The operator's trait on one of the engine's own providers, and
	// entries by the engine's own marker and by a stranger claiming it.
	own = nodeUUID(0)
	if err := a.fake.AddTrait(own, "CUSTOM_OPERATOR"); err != nil {
		t.Fatal(err)
	}
	forged := map[string]string{
		nova:                                   fmt.Sprintf(`{"by":%q,"Pending":true}`, a.ownerT),
		filled:                                 fmt.Sprintf(`{"by":%q,"Pending":true}`, a.ownerT),
		own:                                    fmt.Sprintf(`{"by":%q,"Managed":{"Traits":["CUSTOM_OPERATOR"]}}`, a.ownerT),
		nodeUUID(1):                            `{"by":"CUSTOM_RPENGINE_OWNER_STRANGER","Managed":{"Traits":["CUSTOM_OPERATOR"]}}`,
		"22222222-0000-4000-8000-000000000003": `{"by":"nobody","Pending":true}`,
		"22222222-0000-4000-8000-000000000004": `{"by":` + strings.Repeat(" ", 70<<10) + `"x"}`,
	}
	if err := a.fake.AddTrait(nodeUUID(1), "CUSTOM_OPERATOR"); err != nil {
		t.Fatal(err)
	}
	for u, e := range forged {
		store.entries[u] = []byte(e)
	}
	return nova, filled, own
}
