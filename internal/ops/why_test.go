package ops_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/ops"
)

var reWhy = regexp.MustCompile(`(?s)<tr class="node[^"]*" data-uuid="([0-9a-f-]+)" data-state="([a-z_]+)"[^>]*>.*?<td class="why">([^<]*)</td></tr>`)

// Every non-schedulable row says why, with the value that decides it, in
// the words of explain (the node page's and `engine explain`'s verdict);
// a schedulable row says nothing. The header says the last cycle was
// partial, not only the cycle table.
func TestNodeTableSaysWhyAsExplainDoes(t *testing.T) {
	r := nodesRun(t)
	_, html := get(t, r.ops.Handler(), "/")
	rows := reWhy.FindAllStringSubmatch(html, -1)
	if len(rows) != 8 {
		t.Fatalf("%d rows with a why cell, want 8", len(rows))
	}
	for _, m := range rows {
		uuid, state, why := m[1], m[2], strings.TrimSpace(m[3])
		row, ok := r.ops.Node(uuid)
		if !ok {
			t.Fatalf("row %s not found", uuid)
		}
		verdict := ops.Explain(row.Source, row.Outcome, nil).Verdict
		switch {
		case state == "schedulable" && why != "":
			t.Errorf("%s schedulable, why %q", uuid, why)
		case state != "schedulable" && (why == "" || !strings.Contains(verdict, unescape(why))):
			t.Errorf("%s %s: why %q, explain's verdict %q", uuid, state, why, verdict)
		}
	}
	for uuid, want := range map[string]string{nodeUUID(3): "maintenance = true", nodeUUID(2): "quarantined (no_class)"} {
		if m := regexp.MustCompile(`(?s)data-uuid="` + uuid + `"[^>]*>.*?<td class="why">([^<]*)</td>`).FindStringSubmatch(html); m == nil || !strings.Contains(m[1], want) {
			t.Errorf("%s: why %v, want %q", uuid, m, want)
		}
	}
	if !strings.Contains(html, `<span id="last-outcome" data-outcome="partial" class="partial">last cycle partial: `) ||
		!strings.Contains(html, `id="partial-cycles"`) {
		t.Errorf("the header does not say the cycles were partial")
	}
}

func unescape(s string) string {
	return strings.NewReplacer("&#34;", `"`, "&#39;", "'", "&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}

// A cycle that reaches only some listed nodes (Placement stopped
// answering) keeps the others' last rows, marked stale; a cycle whose
// listing failed marks every row stale; a full cycle clears the marks.
func TestNodeTableKeepsTheLastKnownRowsStale(t *testing.T) {
	o := ops.New(nil)
	nodes := []hostabi.Node{{UUID: nodeUUID(0)}, {UUID: nodeUUID(1)}, {UUID: nodeUUID(2)}}
	cycle := func(listErr error, reached int) {
		o.CycleStarted()
		if listErr != nil {
			o.Observe(engine.Listed{What: "nodes", Err: listErr})
		} else {
			o.Observe(engine.Listed{What: "nodes", Nodes: nodes})
		}
		for i := range reached {
			o.Observe(engine.ProviderOutcome{Outcome: engine.Outcome{Node: nodeUUID(i), Kind: engine.KindUnchanged}})
		}
		o.CycleDone(engine.Report{Nodes: reached, Errors: []engine.Error{}}, time.Now())
	}
	stale := func() (n int) {
		rows, _, f := o.Nodes(ops.NodeFilter{}, 10)
		for _, r := range rows {
			if r.Stale {
				n++
			}
		}
		if len(rows) != 3 || f.Stale != n {
			t.Fatalf("%d rows, facets %+v", len(rows), f)
		}
		return n
	}
	cycle(nil, 3)
	if n := stale(); n != 0 {
		t.Fatalf("after a full cycle: %d stale", n)
	}
	cycle(nil, 1)
	if n := stale(); n != 2 {
		t.Fatalf("after a cycle that reached 1 of 3: %d stale, want 2", n)
	}
	cycle(errors.New("plugin timed out"), 0)
	if n := stale(); n != 3 {
		t.Fatalf("after a failed listing: %d stale, want 3", n)
	}
	_, html := get(t, o.Handler(), "/")
	if !strings.Contains(html, `<p id="stale" class="partial" data-stale="3">3 of 3 rows are from an earlier cycle`) {
		t.Errorf("the page does not say the table is stale")
	}
	cycle(nil, 3)
	if n := stale(); n != 0 {
		t.Fatalf("after a full cycle again: %d stale", n)
	}
}

// The page of a quarantined node, which the cycle reserves without
// reading, shows the provider as Placement holds it (read for the page,
// and said so) — fully reserved, as explain says — not "no provider
// read".
func TestQuarantinedNodePageShowsItsProvider(t *testing.T) {
	r := nodesRun(t)
	h := r.ops.Handler()
	q := nodeUUID(2)
	if row, _ := r.ops.Node(q); row.State != "quarantined" || row.Placement.Exists {
		t.Fatalf("the rig's node 2: %+v", row)
	}
	r.ops.SetAPI(&ops.API{Provider: func(_ context.Context, uuid string) (engine.Observed, error) {
		p, ok := r.fake.Provider(uuid)
		if !ok {
			return engine.Observed{}, nil
		}
		inv := map[string]placement.Inventory{}
		for rc, i := range p.Inventories {
			inv[rc] = placement.Inventory{Total: i.Total, Reserved: i.Reserved}
		}
		return engine.Observed{Exists: true, Generation: placement.Generation(fmt.Sprint(p.Generation)), Inventory: inv, Traits: p.Traits}, nil
	}})
	_, html := get(t, h, "/node/"+q)
	p, _ := r.fake.Provider(q)
	for rc, i := range p.Inventories {
		want := fmt.Sprintf(`<tr data-class="%s" data-reserved="%d">`, rc, i.Total)
		if i.Reserved != i.Total || !strings.Contains(html, want) {
			t.Errorf("the page does not show %s fully reserved (%d of %d): want %q", rc, i.Reserved, i.Total, want)
		}
	}
	if !strings.Contains(html, `id="read-for-page"`) || strings.Contains(html, "no provider read") {
		t.Errorf("the page does not say the provider was read for it")
	}
}
