package e2e

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/ironictest"
	"github.com/rpengine/rpengine/internal/testing/novatest"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

const (
	zoneAggA = "a0a0a0a0-0000-4000-8000-00000000000a"
	zoneAggB = "b0b0b0b0-0000-4000-8000-00000000000b"
)

// zoneRules maps shard rack-a to zoneAggA and rack-b to zoneAggB.
var zoneRules = zoneRulesBy(`shard = "rack-a"`, `shard = "rack-b"`)

// zoneRulesBy are two rules: nodes a selects in zone az-a (zoneAggA),
// nodes b selects in az-b (zoneAggB).
func zoneRulesBy(a, b string) string {
	return `
[[provider.aggregate_rules]]
zone = "az-a"
` + a + `
aggregates = ["` + zoneAggA + `"]

[[provider.aggregate_rules]]
zone = "az-b"
` + b + `
aggregates = ["` + zoneAggB + `"]
`
}

// zoneCandidates is the set of providers GET /allocation_candidates returns
// for one unit of class in aggregate agg (member_of, as nova's
// map_az_to_placement_aggregate asks).
func zoneCandidates(t *testing.T, url, class, memberOf string) []string {
	t.Helper()
	return candidatesOf(t, url, fmt.Sprintf("/allocation_candidates?resources=%s:1&member_of=%s", class, memberOf))
}

// candidatesOf is the providers an allocation candidates query returns.
func candidatesOf(t *testing.T, url, path string) []string {
	t.Helper()
	var out struct {
		Summaries map[string]any `json:"provider_summaries"`
	}
	if code := placementGet(t, url, path, &out); code != 200 {
		t.Fatalf("GET %s: %d", path, code)
	}
	var us []string
	for u := range out.Summaries {
		us = append(us, u)
	}
	slices.Sort(us)
	return us
}

// Nodes of two shards in two aggregates, by the real Ironic and
// Placement: each aggregate's allocation candidates are exactly its
// shard's nodes; a node moved to the other shard is the other
// aggregate's after one cycle, and a poller never sees it in neither
// aggregate or in both (it stays schedulable throughout).
// TestZonesByConductorGroup is the same by conductor group.
func TestZonesByShard(t *testing.T) {
	url := placementtest.StartReal(t)
	ironicURL := ironictest.StartReal(t)
	c := ironictest.NewClient(t, ironicURL)
	z := zoneMove{url: url, ironicURL: ironicURL, c: c, groups: map[string][]string{},
		rules: zoneRules, moved: `shard="rack-b"`}
	for i := range 4 {
		g := []string{"rack-a", "rack-b"}[i%2]
		u := c.Create(t, ironictest.Spec{Name: fmt.Sprintf("z%d", i), ResourceClass: "baremetal-gold", Shard: g})
		c.Available(t, u)
		z.groups[g] = append(z.groups[g], u)
	}
	z.move = func(u string) { c.SetShard(t, u, "rack-b") }
	z.run(t)
}

// Nodes of two conductor groups in two aggregates: TestZonesByShard's
// checks, with a conductor serving each group (Ironic refuses a node a
// group no conductor serves), on the one database.
func TestZonesByConductorGroup(t *testing.T) {
	url := placementtest.StartReal(t)
	ironicURL := ironictest.StartRealGroups(t, "rack-a", "rack-b")
	c := ironictest.NewClient(t, ironicURL)
	z := zoneMove{url: url, ironicURL: ironicURL, c: c, groups: map[string][]string{},
		rules: zoneRulesBy(`conductor_group = "rack-a"`, `conductor_group = "rack-b"`), moved: `conductor_group="rack-b"`}
	for i := range 4 {
		g := []string{"rack-a", "rack-b"}[i%2]
		u := c.Create(t, ironictest.Spec{Name: fmt.Sprintf("zg%d", i), ResourceClass: "baremetal-gold"})
		c.Set(t, u, "/conductor_group", g)
		c.Available(t, u)
		z.groups[g] = append(z.groups[g], u)
	}
	z.move = func(u string) { c.Set(t, u, "/conductor_group", "rack-b") }
	z.run(t)
}

// zoneMove is a zone test: nodes of two groups ("rack-a", "rack-b",
// by whatever field rules selects on), and how to move a node of rack-a
// to rack-b; moved is explain's text of rack-b's rule.
type zoneMove struct {
	url, ironicURL string
	c              *ironictest.Client
	groups         map[string][]string
	rules, moved   string
	move           func(uuid string)
	// nodeSync moves the node by `engine once --node` (read_nodes, as the
	// daemon's event syncs read), not by a full cycle.
	nodeSync bool
}

// run reconciles the nodes with the rules and checks, with the real
// Placement's allocation candidates and nova's own query, that each
// zone holds exactly its group's nodes; then moves the first node of
// rack-a with a poller watching, and checks it answers az-b's query
// after one cycle (or node sync) and was in neither zone, or both, at no
// time.
func (z zoneMove) run(t *testing.T) {
	t.Helper()
	plugin := plugintest.Build(t, "plugins/ironic")
	id := fmt.Sprintf("zones-%x-%d", os.Getpid(), zoneRuns.Add(1))
	cfg := ironicConfig(t, id, z.url, plugin, z.ironicURL, "", "")
	appendFile(t, cfg, z.rules)
	once(t, cfg)
	for g, agg := range map[string]string{"rack-a": zoneAggA, "rack-b": zoneAggB} {
		want := slices.Sorted(slices.Values(z.groups[g]))
		if got := zoneCandidates(t, z.url, "CUSTOM_BAREMETAL_GOLD", agg); !slices.Equal(got, want) {
			t.Fatalf("member_of=%s (%s): %v, want %v", agg, g, got, want)
		}
	}
	t.Run("nova's query", func(t *testing.T) { z.novaQuery(t) })

	moved := z.groups["rack-a"][0]
	z.move(moved)
	stop, seen := make(chan struct{}), &zonePoll{}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); seen.poll(t, z.url, moved, stop) }()
	if z.nodeSync {
		if res := runEngine(t, "once", "--config", cfg, "--node", moved); res.code != 0 || !strings.Contains(res.stderr, "read_nodes") {
			t.Errorf("once --node: exit %d, not by read_nodes:\n%s", res.code, res.stderr)
		}
	} else {
		once(t, cfg)
	}
	close(stop)
	wg.Wait()
	if bad := seen.bad.Load(); bad != nil {
		t.Fatalf("during the move: %s", *bad)
	}
	if seen.polls.Load() == 0 {
		t.Fatal("the poller never read Placement")
	}
	nA, nB := len(z.groups["rack-a"]), len(z.groups["rack-b"])
	if got := zoneCandidates(t, z.url, "CUSTOM_BAREMETAL_GOLD", zoneAggB); !slices.Contains(got, moved) || len(got) != nB+1 {
		t.Fatalf("after the move, member_of=B: %v, want rack-b's %d nodes and %s", got, nB, moved)
	}
	if got := zoneCandidates(t, z.url, "CUSTOM_BAREMETAL_GOLD", zoneAggA); slices.Contains(got, moved) || len(got) != nA-1 {
		t.Fatalf("after the move, member_of=A: %v, want rack-a's other %d", got, nA-1)
	}
	res := runEngine(t, "explain", "--config", cfg, moved)
	if want := `zone az-b: provider.aggregate_rules[1] (` + z.moved + `) puts it in ` + zoneAggB; res.code != 0 || !strings.Contains(res.stdout, want) {
		t.Fatalf("explain: exit %d, no %q in:\n%s%s", res.code, want, res.stdout, res.stderr)
	}
}

// zoneRuns numbers the zone tests' engines within the process.
var zoneRuns atomic.Int64

// novaQuery asks as nova's scheduler does: its own code builds the query
// for a boot in each zone (a subtest: without nova, only it skips).
func (z zoneMove) novaQuery(t *testing.T) {
	for zone, g := range map[string]string{"az-a": "rack-a", "az-b": "rack-b"} {
		agg := map[string]string{"az-a": zoneAggA, "az-b": zoneAggB}[zone]
		q := novatest.AZQuery(t, t.TempDir(), zone, agg)
		if !strings.Contains(q, "member_of=in%3A"+agg) {
			t.Fatalf("nova's query for %s has no member_of its aggregate: %s", zone, q)
		}
		want := slices.Sorted(slices.Values(z.groups[g]))
		if got := candidatesOf(t, z.url, "/allocation_candidates?"+q); !slices.Equal(got, want) {
			t.Fatalf("nova's query for zone %s (%s): %v, want %v", zone, q, got, want)
		}
	}
}

// zonePoll reads one provider's aggregates and the candidates of both
// aggregates until stop, recording the first state where the node is in
// neither aggregate (unschedulable in any zone) or in both.
type zonePoll struct {
	polls atomic.Int64
	bad   atomic.Pointer[string]
}

func (p *zonePoll) poll(t *testing.T, url, node string, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		var aggs struct{ Aggregates []string }
		placementGet(t, url, "/resource_providers/"+node+"/aggregates", &aggs)
		inA, inB := slices.Contains(aggs.Aggregates, zoneAggA), slices.Contains(aggs.Aggregates, zoneAggB)
		either := zoneCandidates(t, url, "CUSTOM_BAREMETAL_GOLD", "in:"+zoneAggA+","+zoneAggB)
		p.polls.Add(1)
		var why string
		switch {
		case inA == inB:
			why = fmt.Sprintf("aggregates %v: in both zones or neither", aggs.Aggregates)
		case !slices.Contains(either, node):
			why = "not a candidate of either zone"
		}
		if why != "" {
			p.bad.CompareAndSwap(nil, &why)
		}
	}
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}
