package soak

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// The bad-input corpus: records a broken or hostile source could send.
// Each must get a clear error naming the node (or be harmlessly
// normalised), and change nothing else: every other provider keeps its
// generation, and a second cycle writes nothing at all (no churn).

// corpusSource serves settable nodes and instances and proves deleted
// only uuids in gone.
type corpusSource struct {
	mu        sync.Mutex
	nodes     []hostabi.Node
	instances []hostabi.Instance
}

func (s *corpusSource) ListNodes(context.Context, hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cloneNodes(s.nodes), nil
}

func (s *corpusSource) ListInstances(context.Context) ([]hostabi.Instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.instances), nil
}

// ConfirmDeleted says present for everything: bad input is never proof.
func (s *corpusSource) ConfirmDeleted(_ context.Context, uuids []string) (deleted, present []string, err error) {
	return nil, uuids, nil
}

type corpusCase struct {
	name string
	// edit changes the good fleet (node 0 is the usual victim).
	edit func(nodes []hostabi.Node, inst []hostabi.Instance) ([]hostabi.Node, []hostabi.Instance)
	// wantErr must appear in one report error; "" means none expected.
	wantErr string
	// rewrites0: node 0's provider may be written, and check says what
	// it must look like then; no other provider may be.
	rewrites0 bool
	check     func(t *testing.T, p placementfake.ProviderState)
}

func replace0(f func(n *hostabi.Node)) func([]hostabi.Node, []hostabi.Instance) ([]hostabi.Node, []hostabi.Instance) {
	return func(ns []hostabi.Node, in []hostabi.Instance) ([]hostabi.Node, []hostabi.Instance) {
		f(&ns[0])
		return ns, in
	}
}

func addNode(f func(n *hostabi.Node)) func([]hostabi.Node, []hostabi.Instance) ([]hostabi.Node, []hostabi.Instance) {
	return func(ns []hostabi.Node, in []hostabi.Instance) ([]hostabi.Node, []hostabi.Instance) {
		n := hostabi.Node{UUID: "5b000000-0000-4000-8000-000000000001", ResourceClass: "gold",
			PowerState: "power off", ProvisionState: "available", Shard: "a"}
		f(&n)
		return append(ns, n), in
	}
}

func res(r hostabi.Resource) func(n *hostabi.Node) {
	return func(n *hostabi.Node) { n.ResourceClass, n.Resources = "", map[string]hostabi.Resource{"VCPU": r} }
}

func TestBadInputGetsAClearErrorAndChangesNothingElse(t *testing.T) {
	for _, c := range badInputCorpus() {
		t.Run(c.name, func(t *testing.T) { runCorpusCase(t, c) })
	}
}

// reservedOnDoubt says whether the cycle quarantined node (or found it
// unlisted but present: out of scope to the engine) and fully
// reserved its provider, the one write bad input may cause (every doubt reserves).
func reservedOnDoubt(rep engine.Report, fake *placementfake.Server, node string) bool {
	if !slices.ContainsFunc(rep.Outcomes, func(o engine.Outcome) bool {
		return o.Node == strings.ToLower(node) && (o.Kind == engine.KindQuarantined && o.Reserved == "quarantined" ||
			o.Kind == engine.KindKept && o.Reserved == "left_scope") // its garbled record leaves it unlisted, and it exists
	}) {
		return false
	}
	p, _ := fake.Provider(node)
	for _, inv := range p.Inventories {
		if inv.Reserved != inv.Total {
			return false
		}
	}
	return len(p.Inventories) > 0
}

func runCorpusCase(t *testing.T, c corpusCase) {
	fake := placementfake.New()
	defer fake.Close()
	src := &corpusSource{nodes: testNodes(4)}
	state, _ := engine.LoadState("", "")
	eng := newTestEngine(t, fake, src, state)
	if rep := eng.Cycle(context.Background()); len(rep.Errors) > 0 {
		t.Fatal(rep.Errors)
	}
	good := slices.Clone(src.nodes)
	before := generations(fake)
	src.mu.Lock()
	src.nodes, src.instances = c.edit(cloneNodes(src.nodes), nil)
	src.mu.Unlock()
	fake.ResetRequests()
	rep := eng.Cycle(context.Background())

	if c.wantErr != "" && !slices.ContainsFunc(rep.ErrorMessages(), func(e string) bool { return strings.Contains(e, c.wantErr) }) {
		t.Errorf("errors %q, want one containing %q", rep.Errors, c.wantErr)
	}
	if c.wantErr == "" && len(rep.Errors) > 0 {
		t.Errorf("unexpected errors %q", rep.Errors)
	}
	after := generations(fake)
	for i, n := range good {
		changed := before[n.UUID] != after[n.UUID]
		switch {
		case after[n.UUID] == 0:
			t.Errorf("provider of node %d deleted", i)
		case changed && !(i == 0 && c.rewrites0) && !reservedOnDoubt(rep, fake, n.UUID):
			t.Errorf("provider of node %d written: %v", i, excerpt(fake.Requests(), n.UUID))
		}
	}
	for u := range after {
		if _, old := before[u]; !old {
			t.Errorf("provider %s created from bad input", u)
		}
	}
	if c.check != nil {
		p, _ := fake.Provider(good[0].UUID)
		c.check(t, p)
	}
	// Bad input must not make every cycle write: the next one is idle.
	fake.ResetRequests()
	eng.Cycle(context.Background())
	for _, q := range fake.Requests() {
		if q.Method != "GET" {
			t.Errorf("second cycle wrote again: %s %s", q.Method, q.Path)
		}
	}
}

func generations(fake *placementfake.Server) map[string]int64 {
	out := map[string]int64{}
	for _, u := range fake.ProviderUUIDs() {
		p, _ := fake.Provider(u)
		out[u] = p.Generation
	}
	return out
}

func badInputCorpus() []corpusCase {
	bad := strings.Repeat("x", 1<<20)
	cases := []corpusCase{
		// Malformed uuids: the node's own provider (if any) is kept.
		{name: "uuid not a uuid", edit: addNode(func(n *hostabi.Node) { n.UUID = "not-a-uuid" }), wantErr: "is not a UUID"},
		{name: "uuid empty", edit: addNode(func(n *hostabi.Node) { n.UUID = "" }), wantErr: "is not a UUID"},
		{name: "uuid in braces", edit: addNode(func(n *hostabi.Node) { n.UUID = "{" + n.UUID + "}" }), wantErr: "is not a UUID"},
		{name: "uuid not hex", edit: addNode(func(n *hostabi.Node) { n.UUID = strings.Replace(n.UUID, "5b", "zz", 1) }), wantErr: "is not a UUID"},
		{name: "uuid with NUL and non-ASCII", edit: addNode(func(n *hostabi.Node) { n.UUID = n.UUID[:34] + "\x00é" }), wantErr: "is not a UUID"},
		{name: "uuid one megabyte", edit: addNode(func(n *hostabi.Node) { n.UUID = bad }), wantErr: "is not a UUID"},
		{name: "known node's uuid garbled", edit: replace0(func(n *hostabi.Node) { n.UUID = n.UUID[:35] }), wantErr: "is not a UUID"},
		// Classes.
		{name: "class empty", edit: replace0(func(n *hostabi.Node) { n.ResourceClass = "" }), wantErr: "no resource_class and no resources"},
		{name: "class one megabyte", edit: replace0(func(n *hostabi.Node) { n.ResourceClass = bad }), wantErr: "normalises to an invalid name"},
		{name: "class 300 characters", edit: addNode(func(n *hostabi.Node) { n.ResourceClass = strings.Repeat("G", 300) }), wantErr: "normalises to an invalid name"},
		// Duplicates and contradictions: both records are refused.
		{name: "duplicate record", edit: func(ns []hostabi.Node, in []hostabi.Instance) ([]hostabi.Node, []hostabi.Instance) {
			return append(ns, ns[0]), in
		}, wantErr: "reported 2 times"},
		{name: "duplicate in another case", edit: func(ns []hostabi.Node, in []hostabi.Instance) ([]hostabi.Node, []hostabi.Instance) {
			twin := ns[0]
			twin.UUID = strings.ToUpper(twin.UUID)
			return append(ns, twin), in
		}, wantErr: "reported 2 times"},
		{name: "duplicate contradicting itself", edit: func(ns []hostabi.Node, in []hostabi.Instance) ([]hostabi.Node, []hostabi.Instance) {
			twin := ns[0]
			twin.Maintenance, twin.ResourceClass = true, "silver"
			return append(ns, twin), in
		}, wantErr: "reported 2 times"},
		{name: "class and resources", edit: replace0(func(n *hostabi.Node) {
			n.Resources = map[string]hostabi.Resource{"VCPU": {Total: 8}}
		}), wantErr: "bare metal or not"},
		// Explicit resources outside Placement's schema.
		{name: "resources total too big", edit: replace0(res(hostabi.Resource{Total: 1 << 40})), wantErr: "outside 1..2147483647"},
		{name: "resources total negative", edit: replace0(res(hostabi.Resource{Total: -4})), wantErr: "outside 1.."},
		{name: "resources reserved over total", edit: replace0(res(hostabi.Resource{Total: 4, Reserved: 5})), wantErr: "reserved 5 outside"},
		{name: "resources min over max", edit: replace0(res(hostabi.Resource{Total: 4, MinUnit: 3, MaxUnit: 2})), wantErr: "min_unit 3 / max_unit 2"},
		{name: "resources negative ratio", edit: replace0(res(hostabi.Resource{Total: 4, AllocationRatio: -1})), wantErr: "allocation_ratio"},
		{name: "resources class lower case", edit: replace0(func(n *hostabi.Node) {
			n.ResourceClass, n.Resources = "", map[string]hostabi.Resource{"vcpu": {Total: 4}}
		}), wantErr: "not a valid Placement name"},
		// Traits: invalid ones are left out, the rest still written.
		{name: "traits invalid", edit: replace0(func(n *hostabi.Node) {
			n.Traits = append(n.Traits, "lower", "HAS SPACE", strings.Repeat("T", 256), bad)
		}), wantErr: "invalid traits"},
		{name: "traits invalid beside a valid new one", edit: replace0(func(n *hostabi.Node) {
			n.Traits = append(n.Traits, "lower", "CUSTOM_NEW")
		}), wantErr: "invalid traits", rewrites0: true, check: func(t *testing.T, p placementfake.ProviderState) {
			if !slices.Contains(p.Traits, "CUSTOM_NEW") || slices.Contains(p.Traits, "lower") {
				t.Errorf("traits %v", p.Traits)
			}
		}},
		// Names the engine's check lets through but Placement refuses: the
		// node's reservation must still be written (it went to maintenance).
		{name: "trait CUSTOM_ alone, node to maintenance", edit: replace0(func(n *hostabi.Node) {
			n.Traits, n.Maintenance = append(n.Traits, "CUSTOM_"), true
		}), wantErr: "CUSTOM_", rewrites0: true, check: reservedAll},
		// A standard-looking trait this Placement lacks is left out with
		// one WARN log line per process, not a report error (by design:
		// Placement learns standard traits on upgrade).
		{name: "unknown standard trait, node to maintenance", edit: replace0(func(n *hostabi.Node) {
			n.Traits, n.Maintenance = append(n.Traits, "HW_NOT_A_REAL_TRAIT"), true
		}), rewrites0: true, check: reservedAll},
		// Instances that name nothing change nothing.
		{name: "instances naming unknown or empty nodes", edit: func(ns []hostabi.Node, in []hostabi.Instance) ([]hostabi.Node, []hostabi.Instance) {
			return ns, []hostabi.Instance{{UUID: "i1", NodeUUID: "5c000000-0000-4000-8000-000000000001"}, {UUID: "i2"}, {NodeUUID: bad}}
		}},
		{name: "instance on a node, upper case, many times", edit: func(ns []hostabi.Node, in []hostabi.Instance) ([]hostabi.Node, []hostabi.Instance) {
			for range 1000 {
				in = append(in, hostabi.Instance{UUID: "i1", NodeUUID: strings.ToUpper(ns[0].UUID)})
			}
			return ns, in
		}, rewrites0: true, check: func(t *testing.T, p placementfake.ProviderState) {
			if p.Inventories[normalise(classes[0])].Reserved+p.Inventories[normalise(classes[1])].Reserved+
				p.Inventories[normalise(classes[2])].Reserved != 1 {
				t.Errorf("occupied node not reserved: %+v", p.Inventories)
			}
		}},
		// Out of scope: ignored entirely, however hostile.
		{name: "hostile node out of scope", edit: addNode(func(n *hostabi.Node) {
			n.Shard, n.UUID, n.ResourceClass = "elsewhere", "not-a-uuid", ""
		})},
	}
	return cases
}

func reservedAll(t *testing.T, p placementfake.ProviderState) {
	t.Helper()
	for rc, inv := range p.Inventories {
		if inv.Reserved != inv.Total {
			t.Errorf("%s not reserved: %+v", rc, inv)
		}
	}
}
