package ironic

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
)

func TestMergePagesKeepsOneNodePerUUID(t *testing.T) {
	n := func(id, name string) hostabi.Node { return hostabi.Node{UUID: id, Name: name} }
	cases := []struct {
		chunks [][]hostabi.Node
		want   []hostabi.Node
		dups   int
	}{
		{nil, []hostabi.Node{}, 0},
		{[][]hostabi.Node{{n("a", "1"), n("b", "1")}, {n("c", "1")}},
			[]hostabi.Node{n("a", "1"), n("b", "1"), n("c", "1")}, 0},
		// across pages: the later data, at the first place
		{[][]hostabi.Node{{n("a", "1"), n("b", "1")}, {n("b", "2"), n("c", "1")}},
			[]hostabi.Node{n("a", "1"), n("b", "2"), n("c", "1")}, 1},
		// within a page, then a node after the dropped one, then its repeat
		{[][]hostabi.Node{{n("a", "1"), n("a", "2"), n("b", "1"), n("c", "1")}, {n("c", "2"), n("b", "2"), n("d", "1")}},
			[]hostabi.Node{n("a", "2"), n("b", "2"), n("c", "2"), n("d", "1")}, 3},
	}
	for i, c := range cases {
		got, dups, err := MergePages(pagesOf(c.chunks))
		if err != nil || !reflect.DeepEqual(got, c.want) || dups != c.dups {
			t.Errorf("case %d: got %v (%d dups), want %v (%d)", i, got, dups, c.want, c.dups)
		}
	}
}

func TestMergePagesAtScale(t *testing.T) {
	var chunks [][]hostabi.Node
	for p := range 10 {
		var c []hostabi.Node
		for i := range 1000 {
			c = append(c, hostabi.Node{UUID: fmt.Sprintf("%08d-0000-4000-8000-000000000000", p*900+i)})
		}
		chunks = append(chunks, c) // pages overlap by 100 nodes
	}
	got, dups, err := MergePages(pagesOf(chunks))
	if err != nil || len(got) != 9100 || dups != 900 {
		t.Fatalf("%d nodes, %d dups", len(got), dups)
	}
	for i, n := range got {
		if n.UUID != fmt.Sprintf("%08d-0000-4000-8000-000000000000", i) {
			t.Fatalf("node %d is %s", i, n.UUID)
		}
	}
}

func pagesOf(chunks [][]hostabi.Node) []Page {
	var out []Page
	for _, c := range chunks {
		out = append(out, Nodes{List: c})
	}
	return out
}

func TestMergePagesRefusesANodeWithoutUUID(t *testing.T) {
	_, _, err := MergePages(pagesOf([][]hostabi.Node{{{UUID: "a"}}, {{Name: "x"}}}))
	if err == nil {
		t.Fatal("accepted a node without uuid")
	}
}

// MergeRefs keeps the same node per uuid at the same place as MergePages:
// resolving its runs against the pages gives MergePages's nodes.
func TestMergeRefsNamesWhatMergePagesBuilds(t *testing.T) {
	n := func(id, name string) map[string]any { return map[string]any{"uuid": id, "name": name} }
	bodies := [][]map[string]any{
		{n("a", "1"), n("a", "2"), n("b", "1"), n("c", "1")},
		{n("c", "2"), n("b", "2"), n("d", "1")},
		{n("e", "1"), n("a", "3")},
	}
	var pages []Page
	for i, b := range bodies {
		raw, _ := json.Marshal(map[string]any{"nodes": b})
		r, err := guest.ProjectLocal(raw, nodePage)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, projected{r: r, ref: uint32(i + 1)})
	}
	want, wantDups, err := MergePages(pages)
	if err != nil {
		t.Fatal(err)
	}
	refs, dups, err := MergeRefs(pages)
	if err != nil || refs == nil || dups != wantDups || refs.Fields != nodeRefFields {
		t.Fatalf("refs %+v, %d dups (want %d), %v", refs, dups, wantDups, err)
	}
	var got []hostabi.Node
	for _, run := range refs.Runs {
		p := pages[run.Frame-1].(projected)
		for i := run.First; i < run.First+run.Count; i++ {
			one := make([]hostabi.Node, 1)
			if err := (oneRecord{p, int(i)}).Fill(one); err != nil {
				t.Fatal(err)
			}
			got = append(got, one[0])
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("by reference %v, MergePages %v", got, want)
	}
	if refs, _, _ := MergeRefs(append(pages, projected{r: pages[0].(projected).r})); refs != nil {
		t.Fatal("refs to a page the host did not keep")
	}
}

// oneRecord is record i of a projected page, as a page of one.
type oneRecord struct {
	p projected
	i int
}

func (o oneRecord) Fill(dst []hostabi.Node) error {
	all := make([]hostabi.Node, o.p.Len())
	if err := o.p.Fill(all); err != nil {
		return err
	}
	dst[0] = all[o.i]
	return nil
}

// Uuids that all collide under the quick hash (a listing built against
// its seed) still merge to the same nodes: past maxProbe the table is
// rebuilt with maphash, so the cost stays bounded and the result equal.
func TestMergeSurvivesCollidingUUIDs(t *testing.T) {
	var nodes []map[string]any
	for i := range 3 * maxProbe {
		nodes = append(nodes, map[string]any{"uuid": fmt.Sprintf("u-%04d", i), "name": "first"})
	}
	nodes = append(nodes, map[string]any{"uuid": "u-0007", "name": "again"}) // a duplicate past the rebuild
	raw, _ := json.Marshal(map[string]any{"nodes": nodes})
	r, err := guest.ProjectLocal(raw, nodePage)
	if err != nil {
		t.Fatal(err)
	}
	pages := []Page{projected{r: r, ref: 1}}
	want, wantDups, _ := MergePages(pages) // with the quick hash
	wantRefs, _, _ := MergeRefs(pages)
	testQuickHash = func(string) uint64 { return 7 }
	defer func() { testQuickHash = nil }()
	got, dups, err := MergePages(pages)
	if err != nil || dups != 1 || dups != wantDups || len(got) != 3*maxProbe || got[7].Name != "again" || !reflect.DeepEqual(got, want) {
		t.Fatalf("colliding: %d nodes, %d dups, %v; node 7 %+v", len(got), dups, err, got[7])
	}
	refs, dups, err := MergeRefs(pages)
	if err != nil || dups != 1 || !reflect.DeepEqual(refs, wantRefs) {
		t.Fatalf("colliding refs %+v (%d dups, %v), want %+v", refs, dups, err, wantRefs)
	}
}

// quickHash spreads canonical uuids over a table's low bits, sequential
// ones (as test fleets and some tools make) included.
func TestQuickHashSpreadsUUIDs(t *testing.T) {
	tab := newUUIDTable(10000)
	longest := 0
	nodes := make([]hostabi.Node, 0, 10000)
	for i := range 10000 {
		u := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i*7)
		nodes = append(nodes, hostabi.Node{UUID: u})
		n := 0
		for h := tab.hash(u) & tab.mask; tab.slots[h] != 0; h = (h + 1) & tab.mask {
			n++
		}
		longest = max(longest, n)
		if _, found := tab.insert(nodes, u, i); found {
			t.Fatalf("%s found before it was inserted", u)
		}
	}
	if longest >= maxProbe || tab.quick == 0 {
		t.Fatalf("longest probe %d (quick seed %d): the quick hash does not spread sequential uuids", longest, tab.quick)
	}
}

// Past maxProbe colliding keys, the table turns to maphash and finds
// every key it holds.
func TestUUIDTableRebuildsOnLongProbes(t *testing.T) {
	testQuickHash = func(string) uint64 { return 3 }
	defer func() { testQuickHash = nil }()
	tab := newUUIDTable(4 * maxProbe)
	var nodes []hostabi.Node
	for i := range 4 * maxProbe {
		nodes = append(nodes, hostabi.Node{UUID: fmt.Sprint("n", i)})
		if _, found := tab.insert(nodes, nodes[i].UUID, i); found {
			t.Fatalf("%s found before it was inserted", nodes[i].UUID)
		}
	}
	if tab.quick != 0 {
		t.Fatal("the table kept the colliding hash")
	}
	for i, n := range nodes {
		if at, found := tab.insert(nodes, n.UUID, len(nodes)); !found || at != i {
			t.Fatalf("%s: at %d, found %v; want %d", n.UUID, at, found, i)
		}
	}
}
