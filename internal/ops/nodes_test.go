package ops_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine"
)

// nodesRun scripts a fleet with one node in each state the filters
// select: maintenance (3), quarantined (2), another owner's provider (5),
// a deletion waiting for its second proof (6). Nodes are named rack1-nI.
func nodesRun(t *testing.T) *rig {
	r := newRig(t, 8)
	r.src.set(func(s *source) {
		for i := range s.nodes {
			s.nodes[i].Name = fmt.Sprintf("rack1-n%d", i)
		}
	})
	if err := r.fake.CreateProvider(nodeUUID(5), nodeUUID(5)); err != nil {
		t.Fatal(err)
	}
	if err := r.fake.AddTrait(nodeUUID(5), engine.OwnerTrait("other")); err != nil {
		t.Fatal(err)
	}
	r.cycle()
	r.src.set(func(s *source) {
		s.nodes[2].ResourceClass = ""
		s.nodes[3].Maintenance = true
		s.gone[nodeUUID(6)] = true
		s.nodes = slices.Delete(s.nodes, 6, 7)
	})
	r.cycle()
	return r
}

var reNodeRow = regexp.MustCompile(`<tr class="node" data-uuid="([0-9a-f-]+)" data-state="([a-z_]+)">`)

// rowsOf lists the node table's rows: uuid and state.
func rowsOf(html string) []string {
	var out []string
	for _, m := range reNodeRow.FindAllStringSubmatch(html, -1) {
		out = append(out, m[1]+" "+m[2])
	}
	return out
}

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	b, _ := io.ReadAll(rec.Body)
	return rec.Code, string(b)
}

// filterCases are the filters and the rows each must leave; the same
// cases run in Chromium.
var filterCases = []struct{ query, want string }{
	{"state=maintenance", nodeUUID(3) + " maintenance"},
	{"reserved=maintenance", nodeUUID(3) + " maintenance"},
	{"quarantine=no_class", nodeUUID(2) + " quarantined"},
	{"state=quarantined", nodeUUID(2) + " quarantined"},
	{"pending=1", nodeUUID(6) + " pending_deletion"},
	{"reserved=quarantined", nodeUUID(2) + " quarantined"}, // fully reserved on doubt
	{"reserved=pending_deletion", nodeUUID(6) + " pending_deletion"},
	{"conflicts=1", nodeUUID(5) + " conflict"},
	{"q=RACK1-N4", nodeUUID(4) + " schedulable"},
	{"q=" + nodeUUID(7)[24:], nodeUUID(7) + " schedulable"},
	{"q=rack1&state=maintenance", nodeUUID(3) + " maintenance"},
	{"q=nomatch", ""},
}

func TestNodeTableFilters(t *testing.T) {
	r := nodesRun(t)
	h := r.ops.Handler()
	_, all := get(t, h, "/")
	if rows := rowsOf(all); len(rows) != 8 {
		t.Fatalf("unfiltered table: %v", rows)
	}
	for _, c := range filterCases {
		code, html := get(t, h, "/?"+c.query)
		if got := strings.Join(rowsOf(html), ","); code != 200 || got != c.want {
			t.Errorf("?%s: %d rows %q, want %q", c.query, code, got, c.want)
		}
	}
	// The menus offer what is there, with counts, and keep the choice.
	_, html := get(t, h, "/?quarantine=no_class")
	for _, s := range []string{`<option value="no_class" selected>no_class (1)</option>`,
		`<option value="maintenance">maintenance (1)</option>`, `pending deletion proof (1)`, `conflicts (1)`} {
		if !strings.Contains(html, s) {
			t.Errorf("filter form lacks %q", s)
		}
	}
	if _, html := get(t, h, "/?q=nomatch"); !strings.Contains(html, `id="node-none"`) {
		t.Error("an empty result says nothing")
	}
	_, metrics := get(t, h, "/metrics")
	for _, s := range []string{`rpengine_providers_reserved_on_doubt{reason="quarantined"} 1`,
		`rpengine_providers_reserved_on_doubt{reason="pending_deletion"} 1`} {
		if !strings.Contains(metrics, s) {
			t.Errorf("/metrics lacks %q", s)
		}
	}
}

func TestNodeDetail(t *testing.T) {
	r := nodesRun(t)
	h := r.ops.Handler()
	code, html := get(t, h, "/node/"+nodeUUID(3))
	if code != 200 {
		t.Fatalf("%d\n%s", code, html)
	}
	p, _ := r.fake.Provider(nodeUUID(3))
	for _, s := range []string{
		`<h1>rack1-n3 <code>` + nodeUUID(3) + `</code></h1>`,
		`<strong id="state" class="bad">maintenance</strong>`,
		`&#34;maintenance&#34;: true`, // the plugin's record
		`<tr data-class="CUSTOM_BAREMETAL_GOLD" data-reserved="1">`,
		`<code id="generation">` + fmt.Sprint(p.Generation) + `</code>`, // what Placement holds now
		`<code class="trait">` + engine.OwnerTrait("test") + `</code>`,
		`<code>reserved</code> CUSTOM_BAREMETAL_GOLD 0 → 1`,
	} {
		if !strings.Contains(html, s) {
			t.Errorf("detail lacks %q", s)
		}
	}
	// Its writes, with generations: create, traits, inventory, then the
	// reservation; the last one's after-generation is Placement's now.
	ops := regexp.MustCompile(`<tr class="write" data-op="([a-z_]+)">.*?<code>([^<]*)</code> → <code>([^<]*)</code>`).FindAllStringSubmatch(html, -1)
	var seq []string
	for _, m := range ops {
		seq = append(seq, m[1])
	}
	if strings.Join(seq, ",") != "create_provider,set_traits,set_inventories,set_inventories" || ops[3][3] != fmt.Sprint(p.Generation) {
		t.Errorf("writes %v", ops)
	}
	// Each names Placement's request id for it, to find it in Placement's log.
	if n := len(regexp.MustCompile(`<code class="request-id">req-[0-9a-f-]{36}</code>`).FindAllString(html, -1)); n != len(ops) {
		t.Errorf("%d of %d writes name their request id", n, len(ops))
	}

	code, html = get(t, h, "/node/"+nodeUUID(2))
	if code != 200 || !strings.Contains(html, `<code id="reason">no_class</code>`) || !strings.Contains(html, `id="provider-note">not read: the daemon has no Placement client yet`) {
		t.Errorf("quarantined node: %d\n%s", code, html)
	}
	if code, _ := get(t, h, "/node/"+nodeUUID(99)); code != 404 {
		t.Errorf("unknown node: %d", code)
	}
}

// The cycle timeline splits each cycle into plugin, Placement and engine
// time, as the report does.
func TestCycleTimelineSplit(t *testing.T) {
	r := nodesRun(t)
	_, html := get(t, r.ops.Handler(), "/")
	last := r.ops.Snapshot().Cycles[0].Report
	want := fmt.Sprintf(`<td class="n plugin-ms">%d</td><td class="n placement-ms">%d</td><td class="n engine-ms">%d</td>`,
		last.PluginMS, last.PlacementMS, max(last.DurationMS-last.PluginMS-last.PlacementMS, 0))
	if !strings.Contains(html, want) {
		t.Errorf("timeline row lacks %s", want)
	}
	if !strings.Contains(html, `<tr data-what="nodes" data-ok="true">`) || !strings.Contains(html, `<tr data-what="providers" data-ok="true">`) {
		t.Error("listing health not shown")
	}
}
