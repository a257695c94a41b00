package ops

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/rpengine/rpengine/engine"
)

//go:embed status.html
var statusHTML string

//go:embed node.html
var nodeHTML string

var (
	statusTmpl = template.Must(template.New("status").Funcs(funcs).Parse(statusHTML))
	nodeTmpl   = template.Must(template.New("node").Funcs(funcs).Parse(nodeHTML))
)

var funcs = template.FuncMap{
	"stamp": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"sub": func(a, b int) int { return a - b },
	"ms":  func(d time.Duration) int64 { return d.Milliseconds() },
	"json": func(v any) string {
		b, _ := json.MarshalIndent(v, "", "  ")
		return string(b)
	},
	"engineMS": func(r engine.Report) int64 { return max(r.DurationMS-r.PluginMS-r.PlacementMS, 0) },
	"sorted":   func(m map[string]int) []string { return slices.Sorted(maps.Keys(m)) },
	"either":   func(a, b string) string { return cmp.Or(a, b) },
}

// page is what the template renders.
type page struct {
	Status
	Nodes    []stateCount
	Last     *Cycle
	Chart    template.HTML
	Filter   NodeFilter
	Rows     []NodeRow
	Matched  int
	Facets   Facets
	Listings []ListingHealth
	Auth     AuthHealth
	// Partial counts the cycles shown that were partial or failed: the
	// header says so, not only the cycle table.
	Partial int
}

// maxRows caps the node table: a search narrows it further.
const maxRows = 200

// filterFrom reads the node table's filters from the query string (the
// page's form sends them with GET: no script needed).
func filterFrom(r *http.Request) NodeFilter {
	q := r.URL.Query()
	return NodeFilter{Query: strings.TrimSpace(q.Get("q")), State: q.Get("state"), Reserved: q.Get("reserved"),
		Quarantine: q.Get("quarantine"), Pending: q.Get("pending") != "", Conflicts: q.Get("conflicts") != ""}
}

type stateCount struct {
	State string
	Count int
}

// ServeStatus renders the status page.
func (o *Ops) ServeStatus(w http.ResponseWriter, r *http.Request) {
	s := o.Snapshot()
	p := page{Status: s, Nodes: nodeCounts(s.Cycles), Chart: chart(s.Cycles), Filter: filterFrom(r), Listings: o.Listings()}
	if o.Metrics != nil {
		p.Auth = o.Metrics.Auth()
	}
	p.Rows, p.Matched, p.Facets = o.Nodes(p.Filter, maxRows)
	if len(s.Cycles) > 0 {
		p.Last = &s.Cycles[0]
	}
	for _, c := range s.Cycles {
		if c.Outcome != OK {
			p.Partial++
		}
	}
	render(w, statusTmpl, p, http.StatusOK)
}

// nodePage is the node detail view's data.
type nodePage struct {
	Info  Info
	Now   time.Time
	Row   NodeRow
	Found bool
	UUID  string
	Why   Explanation
	// Allocations on the node's provider, read for this view; AllocNote
	// says why they were not.
	Allocations []Allocation
	AllocNote   string
	// ProviderNote says why the provider was not read for this view, when
	// the cycle had not read it either; ReadForPage marks one read now.
	ProviderNote string
	ReadForPage  bool
}

// ServeNode renders one node: what the plugin reported, what Placement
// holds, the cycle's outcome and the last writes.
func (o *Ops) ServeNode(w http.ResponseWriter, r *http.Request) {
	uuid := r.PathValue("uuid")
	row, ok := o.Node(uuid)
	o.mu.Lock()
	info := o.info
	o.mu.Unlock()
	status := http.StatusOK
	if !ok {
		status = http.StatusNotFound
	}
	page := nodePage{Info: info, Now: o.now(), Row: row, Found: ok, UUID: uuid}
	if ok {
		page.Why = Explain(row.Source, row.Outcome, nil)
		if !row.Placement.Exists { // not read by the cycle (quarantined, failed): read it now
			page.Row.Placement, page.ProviderNote = o.pageProvider(r.Context(), uuid)
			page.ReadForPage = page.Row.Placement.Exists
		}
		if page.Row.Placement.Exists {
			page.Allocations, page.AllocNote = o.pageAllocations(r.Context(), uuid)
		}
	}
	render(w, nodeTmpl, page, status)
}

func render(w http.ResponseWriter, t *template.Template, data any, status int) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(visible(buf.Bytes()))
}

// nodeCounts reads the newest cycle that listed nodes: a cycle whose
// listing failed knows nothing about them.
func nodeCounts(newestFirst []Cycle) []stateCount {
	for _, c := range newestFirst {
		if c.Outcome == Failed && c.Report.Nodes == 0 {
			continue
		}
		var out []stateCount
		for _, st := range NodeStates {
			n := c.Report.Reserved[st]
			if st == "quarantined" {
				n = c.Report.Quarantined
			}
			if n > 0 {
				out = append(out, stateCount{st, n})
			}
		}
		return append(out, stateCount{"total", c.Report.Nodes})
	}
	return nil
}

// chart draws the cycles' durations as bars, oldest on the left, split
// into plugin, Placement and engine time, as inline SVG: no script, no
// external file.
func chart(newestFirst []Cycle) template.HTML {
	const w, h, gap = 720, 120, 2
	n := len(newestFirst)
	if n == 0 {
		return ""
	}
	var top int64 = 1
	for _, c := range newestFirst {
		top = max(top, c.Report.DurationMS)
	}
	bw := min(max(float64(w)/float64(n)-gap, 1), 24) // a few cycles: bars, not blocks
	scale := float64(h-14) / float64(top)
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg id="chart" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="cycle durations">`, w, h+14, w, h+14)
	fmt.Fprintf(&b, `<text x="0" y="10" font-size="10" fill="#777">%d ms</text>`, top)
	for i := range n {
		c := newestFirst[n-1-i]
		r := c.Report
		x := float64(i) * (bw + gap)
		bh := max(float64(h-14)*float64(r.DurationMS)/float64(top), 1)
		fmt.Fprintf(&b, `<g class="bar %s" data-ms="%d"><title>%s: %d ms (plugin %d, Placement %d, engine %d), %s</title>`,
			c.Outcome, r.DurationMS, c.End.UTC().Format("15:04:05"), r.DurationMS, r.PluginMS, r.PlacementMS,
			max(r.DurationMS-r.PluginMS-r.PlacementMS, 0), c.Outcome)
		fmt.Fprintf(&b, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`, c.Outcome, x, float64(h)-bh+14, bw, bh)
		y := float64(h + 14)
		for _, part := range []struct {
			class string
			ms    int64
		}{{"plugin", r.PluginMS}, {"placement", r.PlacementMS}} {
			ph := min(float64(part.ms)*scale, y-(float64(h)-bh+14))
			if ph > 0 {
				y -= ph
				fmt.Fprintf(&b, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`, part.class, x, y, bw, ph)
			}
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // built from numbers and fixed words only
}
