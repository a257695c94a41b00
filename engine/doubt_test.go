package engine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// inventoryWrites decodes the inventories PUT to one provider, in order.
func inventoryWrites(t *testing.T, reqs []placementfake.Request, uuid string) []map[string]placementfake.Inventory {
	t.Helper()
	var out []map[string]placementfake.Inventory
	for _, q := range reqs {
		if q.Method != "PUT" || q.Path != "/resource_providers/"+uuid+"/inventories" || q.Status != 200 {
			continue
		}
		var body struct {
			Inventories map[string]placementfake.Inventory
		}
		if err := json.Unmarshal(q.Body, &body); err != nil {
			t.Fatal(err)
		}
		out = append(out, body.Inventories)
	}
	return out
}

// allocatable says whether an inventory offers any unit.
func allocatable(inv map[string]placementfake.Inventory) bool {
	for _, i := range inv {
		if i.Reserved < i.Total {
			return true
		}
	}
	return false
}

// The provider of a node whose data turns bad is fully reserved in the
// cycle that quarantines it, by one write (no request in between leaves
// it allocatable), costs nothing while it stays so, and is released by
// the sync of its good data.
func TestAQuarantinedNodesProviderIsReservedUntilItsDataIsGood(t *testing.T) {
	r := newRig(t, 3)
	r.cleanCycle()
	bad := nodeUUID(1)
	r.src.set(func(s *source) {
		s.nodes[1].Invalid = &hostabi.Invalid{Code: engine.CodeFieldTooLong, Reason: `a string in "resource_class" is longer than 255 bytes`}
	})
	r.fake.ResetRequests()
	rep := r.cycle()
	if r.reserved(bad) != 1 || r.reserved(nodeUUID(0)) != 0 || r.reserved(nodeUUID(2)) != 0 {
		t.Fatalf("reserved %d, %d, %d", r.reserved(nodeUUID(0)), r.reserved(bad), r.reserved(nodeUUID(2)))
	}
	o := outcomeOf(t, rep, bad)
	if o.Kind != engine.KindQuarantined || o.Reason != engine.CodeFieldTooLong || o.Reserved != "quarantined" || rep.Reserved["quarantined"] != 1 {
		t.Fatalf("outcome %+v, reserved_by_reason %v", o, rep.Reserved)
	}
	ws := inventoryWrites(t, r.fake.Requests(), bad)
	if len(ws) != 1 || allocatable(ws[0]) {
		t.Fatalf("writes to the quarantined provider: %+v", ws)
	}

	r.fake.ResetRequests()
	rep = r.cycle()
	if n := len(r.fake.Find("", "/resource_providers/"+bad+"/*")); n != 0 || outcomeOf(t, rep, bad).Reserved != "quarantined" {
		t.Fatalf("%d requests for a provider already reserved; %+v", n, outcomeOf(t, rep, bad))
	}

	r.src.set(func(s *source) { s.nodes[1].Invalid = nil })
	rep = r.cleanCycle()
	if r.reserved(bad) != 0 || outcomeOf(t, rep, bad).Kind != engine.KindUpdated {
		t.Fatalf("released: reserved %d, %+v", r.reserved(bad), outcomeOf(t, rep, bad))
	}
	r.fake.ResetRequests()
	r.cleanCycle()
	if n := len(r.fake.Find("", "/resource_providers/"+bad+"/*")); n != 0 {
		t.Fatalf("%d requests after the release", n)
	}
}

// A quarantined node without a provider gets none.
func TestAQuarantinedNodeWithoutAProviderGetsNone(t *testing.T) {
	r := newRig(t, 2)
	r.src.set(func(s *source) { s.nodes[1].Invalid = &hostabi.Invalid{Code: engine.CodeBadUTF8, Reason: "not UTF-8"} })
	rep := r.cycle()
	if _, ok := r.fake.Provider(nodeUUID(1)); ok {
		t.Fatal("a provider was created for a quarantined node")
	}
	if o := outcomeOf(t, rep, nodeUUID(1)); o.Reserved != "" || rep.Reserved["quarantined"] != 0 {
		t.Fatalf("%+v %v", o, rep.Reserved)
	}
}

// Releasing restores the source's own reserved values, not just 0: a node
// of explicit resources reserving 4 of 64 VCPU gets its 4 back.
func TestReleaseRestoresTheSourcesReservedValues(t *testing.T) {
	r := newRig(t, 1)
	u := nodeUUID(0)
	r.src.set(func(s *source) {
		s.nodes[0] = hostabi.Node{UUID: u, Resources: map[string]hostabi.Resource{"VCPU": {Total: 64, Reserved: 4}, "MEMORY_MB": {Total: 1024}}}
	})
	r.cleanCycle()
	r.src.set(func(s *source) {
		s.nodes[0].Invalid = &hostabi.Invalid{Code: engine.CodeBadValue, Reason: "traits is not a list"}
	})
	r.cycle()
	if inv := r.provider(u).Inventories; inv["VCPU"].Reserved != 64 || inv["MEMORY_MB"].Reserved != 1024 {
		t.Fatalf("quarantined: %+v", inv)
	}
	r.src.set(func(s *source) { s.nodes[0].Invalid = nil })
	r.cleanCycle()
	if inv := r.provider(u).Inventories; inv["VCPU"].Reserved != 4 || inv["MEMORY_MB"].Reserved != 0 {
		t.Fatalf("released: %+v", inv)
	}
}

// A node proven gone once is fully reserved at once; the second proof
// deletes its provider; a node listed again after one proof is released.
func TestANodeProvenGoneOnceIsReservedUntilTheSecondProof(t *testing.T) {
	r := newRig(t, 4)
	r.cleanCycle()
	gone, back := nodeUUID(3), nodeUUID(2)
	r.src.set(func(s *source) { s.nodes = s.nodes[:2]; s.gone[gone], s.gone[back] = true, true })
	r.fake.ResetRequests()
	rep := r.cycle()
	for _, u := range []string{gone, back} {
		if o := outcomeOf(t, rep, u); o.Kind != engine.KindPendingDeletion || o.Reserved != "pending_deletion" || r.reserved(u) != 1 {
			t.Fatalf("first proof: %+v, reserved %d", o, r.reserved(u))
		}
		if ws := inventoryWrites(t, r.fake.Requests(), u); len(ws) != 1 || allocatable(ws[0]) {
			t.Fatalf("writes: %+v", ws)
		}
	}
	if rep.Reserved["pending_deletion"] != 2 {
		t.Fatalf("reserved_by_reason %v", rep.Reserved)
	}
	r.src.set(func(s *source) { s.nodes = append(s.nodes, fleet(3)[2]); delete(s.gone, back) })
	rep = r.cycle()
	if o := outcomeOf(t, rep, gone); o.Kind != engine.KindDeleted {
		t.Fatalf("second proof: %+v", o)
	}
	if _, ok := r.fake.Provider(gone); ok {
		t.Fatal("provider not deleted at the second proof")
	}
	if r.reserved(back) != 0 || outcomeOf(t, rep, back).Kind != engine.KindUpdated {
		t.Fatalf("listed again: reserved %d, %+v", r.reserved(back), outcomeOf(t, rep, back))
	}
}

// The doubt is on disk before the reserve is sent: a process killed right
// after it (the reserve refused here, as if never sent) restarts knowing
// it, and its successor reserves and later releases as usual.
func TestTheDoubtIsRecordedBeforeTheReserve(t *testing.T) {
	r := newRig(t, 2)
	path := filepath.Join(t.TempDir(), "state.json")
	r.state, _ = engine.LoadState(path, "k")
	r.restart()
	r.cleanCycle()
	u := nodeUUID(1)
	r.src.set(func(s *source) { s.nodes[1].ResourceClass = "" })
	cut := r.fake.Inject(placementfake.Fault{Method: "PUT", Path: "/resource_providers/" + u + "/inventories", Drop: true})
	rep := r.cycle()
	cut.Remove()
	if r.reserved(u) != 0 || !errorsContain(rep.Errors, "quarantined, and not reserved") {
		t.Fatalf("reserved %d, errors %v", r.reserved(u), rep.Errors)
	}
	b, err := os.ReadFile(path)
	j, _ := os.ReadFile(path + ".journal") // a few changes are appended there
	if err != nil || !strings.Contains(string(b)+string(j), `"Doubt":"quarantined"`) {
		t.Fatalf("state file holds no doubt (%v): %.300s", err, b)
	}
	r.state, err = engine.LoadState(path, "k")
	if err != nil {
		t.Fatal(err)
	}
	r.restart()
	r.cycle()
	if r.reserved(u) != 1 {
		t.Fatalf("after the restart: reserved %d", r.reserved(u))
	}
	r.src.set(func(s *source) { s.nodes[1].ResourceClass = "baremetal-gold" })
	r.cleanCycle()
	if r.reserved(u) != 0 {
		t.Fatalf("released: reserved %d", r.reserved(u))
	}
	r.eng.State().Save()
	if st, err := engine.LoadState(path, "k"); err != nil || mustRecord(st, u).Doubt != "" {
		t.Fatalf("the doubt outlived the release (%v): %+v", err, mustRecord(st, u))
	}
}

func mustRecord(st *engine.State, u string) engine.Record {
	r, _ := st.Record(u)
	return r
}
