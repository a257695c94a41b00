package ops

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"net/http"
	"time"
)

//go:embed status.html
var statusHTML string

var statusTmpl = template.Must(template.New("status").Funcs(template.FuncMap{
	"stamp": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"sub": func(a, b int) int { return a - b },
}).Parse(statusHTML))

// page is what the template renders.
type page struct {
	Status
	Nodes []stateCount
	Last  *Cycle
	Chart template.HTML
}

type stateCount struct {
	State string
	Count int
}

// ServeStatus renders the status page.
func (o *Ops) ServeStatus(w http.ResponseWriter, r *http.Request) {
	s := o.Snapshot()
	p := page{Status: s, Nodes: nodeCounts(s.Cycles), Chart: chart(s.Cycles)}
	if len(s.Cycles) > 0 {
		p.Last = &s.Cycles[0]
	}
	var buf bytes.Buffer
	if err := statusTmpl.Execute(&buf, p); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(buf.Bytes())
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
			n := c.Report.Reserved[reasonOf(st)]
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

func reasonOf(state string) string {
	if state == "schedulable" {
		return ""
	}
	return state
}

// chart draws the cycles' durations as bars, oldest on the left, as
// inline SVG: no script, no external file.
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
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg id="chart" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="cycle durations">`, w, h+14, w, h+14)
	fmt.Fprintf(&b, `<text x="0" y="10" font-size="10" fill="#777">%d ms</text>`, top)
	for i := range n {
		c := newestFirst[n-1-i]
		bh := max(float64(h-14)*float64(c.Report.DurationMS)/float64(top), 1)
		fmt.Fprintf(&b, `<rect class="bar %s" data-ms="%d" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s: %d ms, %s</title></rect>`,
			c.Outcome, c.Report.DurationMS, float64(i)*(bw+gap), float64(h)-bh+14, bw, bh,
			c.End.UTC().Format("15:04:05"), c.Report.DurationMS, c.Outcome)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // built from numbers and fixed words only
}
