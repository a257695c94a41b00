package wasmhost

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/projection"
)

// refPage is a node page's projection in the shape the Ironic plugin asks
// for (the field order differs from the node's on purpose).
var refPage = projection.Projection{Array: "nodes", Fields: []projection.Field{
	{Name: "traits", Kind: projection.KindStrings}, {Name: "uuid", Kind: projection.KindString},
	{Name: "name", Kind: projection.KindString}, {Name: "resource_class", Kind: projection.KindString},
	{Name: "maintenance", Kind: projection.KindBool}, {Name: "instance_uuid", Kind: projection.KindString},
	{Name: "power_state", Kind: projection.KindString}, {Name: "provision_state", Kind: projection.KindString},
	{Name: "target_provision_state", Kind: projection.KindString}, {Name: "fault", Kind: projection.KindString},
	{Name: "shard", Kind: projection.KindString}, {Name: "conductor_group", Kind: projection.KindString},
	{Name: "retired", Kind: projection.KindBool},
}}

// refFields maps the node fields to refPage's.
var refFields = [hostabi.RefFields]uint32{
	hostabi.RefUUID: 2, hostabi.RefName: 3, hostabi.RefResourceClass: 4, hostabi.RefInstanceUUID: 6,
	hostabi.RefPowerState: 7, hostabi.RefProvisionState: 8, hostabi.RefTargetProvisionState: 9,
	hostabi.RefFault: 10, hostabi.RefShard: 11, hostabi.RefConductorGroup: 12,
	hostabi.RefMaintenance: 5, hostabi.RefRetired: 13, hostabi.RefTraits: 1,
}

// keepPages projects each page as the gate does and keeps the frames.
func keepPages(t testing.TB, budget int64, pages ...[]hostabi.Node) *keptFrames {
	t.Helper()
	k := newKeptFrames(budget)
	for _, nodes := range pages {
		for i := range nodes {
			nodes[i].Resources = nil // not a projected field
		}
		body, _ := json.Marshal(map[string]any{"nodes": nodes, "next": "x"})
		frame, err := projection.HostProjectLimited(body, refPage, projection.Limits{MaxBytes: 1 << 30, Headroom: headRoom})
		if err != nil {
			t.Fatal(err)
		}
		if k.add(frame[headRoom:], refPage) == 0 {
			t.Fatal("not kept")
		}
	}
	return k
}

func readRefs(b []byte, lim Limits, budget int64, k *keptFrames) ([]hostabi.Node, error) {
	return decodeNodeRefs(bufio.NewReader(bytes.NewReader(b)), lim, budget, k)
}

// The nodes an answer by reference names decode to exactly what the same
// nodes answered in binary records decode to, per-node marks included:
// an over-long name, too many traits, a node at the place of its first
// sighting with the data of its last.
func TestRefsDecodeAsRecordsDo(t *testing.T) {
	page1, page2 := sampleNodes(6), sampleNodes(9)[6:]
	page1[2].Name = strings.Repeat("n", 300)
	for i := range 60 {
		page1[4].Traits = append(page1[4].Traits, "CUSTOM_T"+strings.Repeat("x", i))
	}
	page2[1] = page1[3] // a duplicate: the answer keeps the later one at the first place
	page2[1].Name = "moved"
	k := keepPages(t, 1<<30, page1, page2)
	var refs hostabi.NodeRefs
	refs.Fields = refFields
	for i := range 6 {
		if i == 3 {
			refs.Add(2, 1)
		} else {
			refs.Add(1, uint32(i))
		}
	}
	refs.Add(2, 0)
	refs.Add(2, 2)
	want := append(append(append([]hostabi.Node{}, page1[:3]...), page2[1]), page1[4:]...)
	want = append(want, page2[0], page2[2])
	lim := Limits{}
	got, err := readRefs(hostabi.AppendNodeRefs(nil, refs), lim, 1<<30, k)
	if err != nil {
		t.Fatal(err)
	}
	same, err := readNodes(encodeNodes(t, want), lim, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, same) {
		t.Fatalf("by reference:\n%+v\nin records:\n%+v", got, same)
	}
	if got[2].Invalid == nil || got[2].Invalid.Code != hostabi.InvalidFieldTooLong || got[4].Invalid == nil || got[4].Invalid.Code != hostabi.InvalidTooManyEntries {
		t.Fatalf("marks: %+v, %+v", got[2].Invalid, got[4].Invalid)
	}
	if len(refs.Runs) != 5 {
		t.Fatalf("runs %+v", refs.Runs)
	}
}

// Anything the host does not hold, or cannot read as asked, refuses the
// whole answer, naming what was wrong; over a whole-answer limit too.
func TestRefsRefusals(t *testing.T) {
	k := keepPages(t, 1<<30, sampleNodes(4))
	good := hostabi.NodeRefs{Fields: refFields, Runs: []hostabi.NodeRun{{Frame: 1, First: 0, Count: 4}}}
	wrongKind := good
	wrongKind.Fields[hostabi.RefUUID] = 5 // maintenance, a bool
	outside := good
	outside.Fields[hostabi.RefName] = 14
	enc := func(r hostabi.NodeRefs) []byte { return hostabi.AppendNodeRefs(nil, r) }
	withRuns := func(runs ...hostabi.NodeRun) []byte { r := good; r.Runs = runs; return enc(r) }
	for name, tc := range map[string]struct {
		b     []byte
		lim   Limits
		want  string
		limit bool
	}{
		"frame 0":             {b: withRuns(hostabi.NodeRun{Frame: 0, Count: 1}), want: "names frame 0"},
		"frame not kept":      {b: withRuns(hostabi.NodeRun{Frame: 2, Count: 1}), want: "names frame 2"},
		"records past":        {b: withRuns(hostabi.NodeRun{Frame: 1, First: 3, Count: 2}), want: "records 3+2"},
		"count overflows":     {b: withRuns(hostabi.NodeRun{Frame: 1, First: 1, Count: 1<<32 - 1}), want: "records 1+"},
		"wrong kind":          {b: enc(wrongKind), want: "of kind"},
		"field not projected": {b: enc(outside), want: "the frame has 13"},
		"other field count":   {b: append([]byte("RPR1N\x0c"), make([]byte, 20)...), want: "maps 12 node fields"},
		"other kind":          {b: []byte("RPR1I\x0d"), want: "kind 'I'"},
		"bad magic":           {b: []byte("RPR2N"), want: "does not start with"},
		"truncated":           {b: enc(good)[:22], want: "ends inside"},
		"data after":          {b: append(enc(good), 0), want: "data after the last run"},
		"over max_records":    {b: withRuns(hostabi.NodeRun{Frame: 1, Count: 4}, hostabi.NodeRun{Frame: 1, Count: 4}), lim: Limits{MaxRecords: 6}, want: "more than 6 records", limit: true},
		"runs over records":   {b: withRuns(make([]hostabi.NodeRun, 7)...), lim: Limits{MaxRecords: 6}, want: "7 runs", limit: true},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := readRefs(tc.b, tc.lim, 1<<30, k)
			var le *limitError
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.As(err, &le) != tc.limit {
				t.Fatalf("got %v, want %q (a limit: %v)", err, tc.want, tc.limit)
			}
		})
	}
	if _, err := readRefs(enc(good), Limits{}, 3*recordCost, k); err == nil || !strings.Contains(err.Error(), "MiB decoded") {
		t.Fatalf("over the budget: %v", err)
	}
	if _, err := readRefs(enc(good), Limits{}, 1<<30, nil); err == nil || !strings.Contains(err.Error(), "did not offer") {
		t.Fatalf("not offered: %v", err)
	}
}

// The host keeps frames only within its budget; past it a page has no
// number, and the plugin answers with its nodes.
func TestKeptFramesBudget(t *testing.T) {
	body, _ := json.Marshal(map[string]any{"nodes": sampleNodes(50)})
	frame, err := projection.HostProjectLimited(body, refPage, projection.Limits{MaxBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	k := newKeptFrames(int64(2*(len(frame)+keptOverhead) + 10))
	for i, want := range []uint32{1, 2, 0, 0} {
		if got := k.add(frame, refPage); got != want {
			t.Fatalf("add %d: %d, want %d", i, got, want)
		}
	}
	if k.add(projection.HostProject([]byte("[]"), []byte("Anodes\n")), refPage) != 0 {
		t.Fatal("an error frame was kept")
	}
}

// FuzzNodeRefs feeds the decoder arbitrary answers against kept frames:
// it never panics, and what it accepts stays within the limits.
func FuzzNodeRefs(f *testing.F) {
	f.Add(hostabi.AppendNodeRefs(nil, hostabi.NodeRefs{Fields: refFields, Runs: []hostabi.NodeRun{{Frame: 1, Count: 3}, {Frame: 2, First: 1, Count: 1}}}))
	f.Add(hostabi.AppendNodeRefs(nil, hostabi.NodeRefs{}))
	f.Add([]byte("RPR1N\x0d"))
	page := sampleNodes(4)
	page[0].Name = strings.Repeat("y", 80)
	k := keepPages(f, 1<<30, page, sampleNodes(3))
	lim := Limits{MaxRecords: 50, MaxField: 64, MaxTraits: 1}
	f.Fuzz(func(t *testing.T, b []byte) {
		nodes, err := readRefs(b, lim, 1<<20, k)
		if err != nil {
			return
		}
		if len(nodes) > lim.MaxRecords {
			t.Fatalf("%d records", len(nodes))
		}
		for _, n := range nodes {
			if len(n.Traits) > lim.MaxTraits || len(n.Name) > lim.MaxField || len(n.UUID) > lim.MaxField {
				t.Fatalf("over the limits: %+v", n)
			}
		}
	})
}
