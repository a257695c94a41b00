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
const zoneRules = `
[[provider.aggregate_rules]]
zone = "az-a"
shard = "rack-a"
aggregates = ["` + zoneAggA + `"]

[[provider.aggregate_rules]]
zone = "az-b"
shard = "rack-b"
aggregates = ["` + zoneAggB + `"]
`

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
// Placement (shards, not conductor groups: Ironic refuses a node a group
// no conductor serves, and the rig runs one conductor, of the default
// group; the rules treat both fields alike, engine/aggregates_test.go): each aggregate's allocation candidates are exactly its
// group's nodes; a node moved to the other group is the other
// aggregate's after one cycle, and a poller never sees it in neither
// aggregate or in both (it stays schedulable throughout).
func TestZonesByShard(t *testing.T) {
	url := placementtest.StartReal(t)
	ironicURL := ironictest.StartReal(t)
	plugin := plugintest.Build(t, "plugins/ironic")
	c := ironictest.NewClient(t, ironicURL)
	groups := map[string][]string{}
	for i := range 4 {
		g := []string{"rack-a", "rack-b"}[i%2]
		u := c.Create(t, ironictest.Spec{Name: fmt.Sprintf("z%d", i), ResourceClass: "baremetal-gold", Shard: g})
		c.Available(t, u)
		groups[g] = append(groups[g], u)
	}
	id := fmt.Sprintf("zones-%x", os.Getpid())
	cfg := ironicConfig(t, id, url, plugin, ironicURL, "", "")
	appendFile(t, cfg, zoneRules)
	once(t, cfg)
	for g, agg := range map[string]string{"rack-a": zoneAggA, "rack-b": zoneAggB} {
		want := slices.Sorted(slices.Values(groups[g]))
		if got := zoneCandidates(t, url, "CUSTOM_BAREMETAL_GOLD", agg); !slices.Equal(got, want) {
			t.Fatalf("member_of=%s (%s): %v, want %v", agg, g, got, want)
		}
	}

	// The same question as nova's scheduler asks it: its own code builds
	// the query for a boot in each zone (a subtest: without nova, only
	// it skips).
	t.Run("nova's query", func(t *testing.T) {
		for zone, g := range map[string]string{"az-a": "rack-a", "az-b": "rack-b"} {
			agg := map[string]string{"az-a": zoneAggA, "az-b": zoneAggB}[zone]
			q := novatest.AZQuery(t, t.TempDir(), zone, agg)
			if !strings.Contains(q, "member_of=in%3A"+agg) {
				t.Fatalf("nova's query for %s has no member_of its aggregate: %s", zone, q)
			}
			want := slices.Sorted(slices.Values(groups[g]))
			if got := candidatesOf(t, url, "/allocation_candidates?"+q); !slices.Equal(got, want) {
				t.Fatalf("nova's query for zone %s (%s): %v, want %v", zone, q, got, want)
			}
		}
	})

	moved := groups["rack-a"][0]
	c.SetShard(t, moved, "rack-b")
	stop, seen := make(chan struct{}), &zonePoll{}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); seen.poll(t, url, moved, stop) }()
	once(t, cfg)
	close(stop)
	wg.Wait()
	if bad := seen.bad.Load(); bad != nil {
		t.Fatalf("during the move: %s", *bad)
	}
	if seen.polls.Load() == 0 {
		t.Fatal("the poller never read Placement")
	}
	if got := zoneCandidates(t, url, "CUSTOM_BAREMETAL_GOLD", zoneAggB); !slices.Contains(got, moved) || len(got) != 3 {
		t.Fatalf("after the move, member_of=B: %v, want rack-b's two nodes and %s", got, moved)
	}
	if got := zoneCandidates(t, url, "CUSTOM_BAREMETAL_GOLD", zoneAggA); slices.Contains(got, moved) || len(got) != 1 {
		t.Fatalf("after the move, member_of=A: %v, want rack-a's one node", got)
	}
	res := runEngine(t, "explain", "--config", cfg, moved)
	if want := `zone az-b: provider.aggregate_rules[1] (shard="rack-b") puts it in ` + zoneAggB; res.code != 0 || !strings.Contains(res.stdout, want) {
		t.Fatalf("explain: exit %d, no %q in:\n%s%s", res.code, want, res.stdout, res.stderr)
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
