package ops_test

import (
	"io"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine"
)

// pageRun scripts three cycles whose last one has writes and an error,
// and returns the reports, oldest first.
func pageRun(t *testing.T) (*rig, []engine.Report) {
	r := newRig(t, 8)
	// Node 5's provider belongs to another engine: an error every cycle.
	if err := r.fake.CreateProvider(nodeUUID(5), nodeUUID(5)); err != nil {
		t.Fatal(err)
	}
	if err := r.fake.AddTrait(nodeUUID(5), engine.OwnerTrait("other")); err != nil {
		t.Fatal(err)
	}
	r.src.set(func(s *source) { s.nodes[2].ResourceClass = "" })
	var reps []engine.Report
	reps = append(reps, r.cycle())
	reps = append(reps, r.cycle()) // nothing changes
	r.src.set(func(s *source) { s.nodes[2].ResourceClass = "baremetal-gold"; s.nodes[3].Maintenance = true })
	reps = append(reps, r.cycle())
	return r, reps
}

var (
	reMain    = regexp.MustCompile(`<main id="status" data-ready="(\w+)" data-healthy="(\w+)" data-cycles="(\d+)">`)
	reState   = regexp.MustCompile(`<tr data-state="([a-z_]+)"><td>[a-z_]+</td><td class="n">(\d+)</td></tr>`)
	reDrift   = regexp.MustCompile(`<tr data-node="([0-9a-f-]*)" data-op="([a-z_]+)">`)
	reCycle   = regexp.MustCompile(`<tr class="cycle" data-outcome="(\w+)" data-ms="(\d+)" data-errors="(\d+)">`)
	reBar     = regexp.MustCompile(`<g class="bar (\w+)" data-ms="(\d+)"`)
	reEngine  = regexp.MustCompile(`<h1>rpengine — engine <code>(\w+)</code></h1>`)
	reNoDrift = regexp.MustCompile(`id="drift-none"`)
)

// checkPage compares what the page shows with the engine's reports: the
// same checks run on the server's HTML and on Chromium's DOM.
func checkPage(t *testing.T, html string, reps []engine.Report) {
	t.Helper()
	last := reps[len(reps)-1]
	m := reMain.FindStringSubmatch(html)
	if m == nil || m[1] != "true" || m[2] != "true" || m[3] != strconv.Itoa(len(reps)) {
		t.Fatalf("status header %v; page:\n%s", m, html)
	}
	if e := reEngine.FindStringSubmatch(html); e == nil || e[1] != "test" {
		t.Errorf("engine id not shown: %v", e)
	}

	// Nodes by state: the last report's counts, quarantined included.
	shown := map[string]int{}
	for _, s := range reState.FindAllStringSubmatch(html, -1) {
		shown[s[1]], _ = strconv.Atoi(s[2])
	}
	want := map[string]int{"total": last.Nodes}
	for reason, n := range last.Reserved {
		if reason == "" {
			reason = "schedulable"
		}
		want[reason] = n
	}
	if last.Quarantined > 0 {
		want["quarantined"] = last.Quarantined
	}
	if !mapsEqual(shown, want) {
		t.Errorf("nodes by state: page %v, engine %v", shown, want)
	}

	// Drift: the providers the last cycle wrote, and the one in error.
	var nodes []string
	for _, d := range reDrift.FindAllStringSubmatch(html, -1) {
		if !slices.Contains(nodes, d[1]) {
			nodes = append(nodes, d[1])
		}
		if d[2] == "error" && d[1] != nodeUUID(5) {
			t.Errorf("error row for %s", d[1])
		}
	}
	slices.Sort(nodes)
	if wantNodes := []string{nodeUUID(2), nodeUUID(3), nodeUUID(5)}; !slices.Equal(nodes, wantNodes) {
		t.Errorf("drift rows for %v, want %v", nodes, wantNodes)
	}
	if reNoDrift.MatchString(html) {
		t.Error("page says no drift")
	}

	// Last cycles, newest first, and one bar per cycle, oldest first.
	rows, bars := reCycle.FindAllStringSubmatch(html, -1), reBar.FindAllStringSubmatch(html, -1)
	if len(rows) != len(reps) || len(bars) != len(reps) {
		t.Fatalf("%d cycle rows and %d bars for %d cycles", len(rows), len(bars), len(reps))
	}
	for i, rep := range reps {
		row, bar := rows[len(reps)-1-i], bars[i]
		ms := strconv.FormatInt(rep.DurationMS, 10)
		outcome := "ok"
		if len(rep.Errors) > 0 {
			outcome = "partial"
		}
		if row[1] != outcome || row[2] != ms || row[3] != strconv.Itoa(len(rep.Errors)) || bar[1] != outcome || bar[2] != ms {
			t.Errorf("cycle %d: row %v bar %v; engine: %s, %s ms, %d errors", i+1, row[1:], bar[1:], outcome, ms, len(rep.Errors))
		}
	}
	if !strings.Contains(html, "is owned by CUSTOM_RPENGINE_OWNER_OTHER") {
		t.Error("the error text is not shown")
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestStatusPageShowsTheEngineState(t *testing.T) {
	r, reps := pageRun(t)
	srv := httptest.NewServer(r.ops.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Fatalf("content type %q", ct)
	}
	b, _ := io.ReadAll(resp.Body)
	checkPage(t, string(b), reps)
	if strings.Contains(string(b), "<script") {
		t.Error("the page must work without script")
	}
}

func TestStatusPageBeforeAnyCycle(t *testing.T) {
	r := newRig(t, 1)
	rec := httptest.NewRecorder()
	r.ops.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `data-ready="false"`) ||
		!strings.Contains(rec.Body.String(), "no cycle yet") {
		t.Fatalf("%d\n%s", rec.Code, rec.Body)
	}
}
