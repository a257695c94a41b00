package ops_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/ops"
)

// stubPlan answers about the nodes it lists.
type stubPlan struct{ nodes []string }

func (p stubPlan) Report(node string) (any, error) {
	if node != "" && !p.has(node) {
		return nil, ops.ErrUnknownNode
	}
	return map[string]any{"nodes": len(p.nodes)}, nil
}

func (p stubPlan) Explain(_ context.Context, node string) (any, error) {
	if !p.has(node) {
		return nil, ops.ErrUnknownNode
	}
	return map[string]string{"node": node}, nil
}

func (p stubPlan) has(n string) bool {
	for _, x := range p.nodes {
		if x == n {
			return true
		}
	}
	return false
}

func call(h http.Handler, method, target string, body string, hdr ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func apiOps(plan func(context.Context) (ops.Plan, error), now func() bool) *ops.Ops {
	o := ops.New(nil)
	o.Configure(ops.Info{EngineID: "az1"})
	o.SetAPI(&ops.API{Plan: plan, CycleNow: now})
	return o
}

func TestAPIMethodsNodesAndBounds(t *testing.T) {
	o := apiOps(func(context.Context) (ops.Plan, error) { return stubPlan{[]string{"n1"}}, nil }, func() bool { return true })
	h := o.Handler()
	cases := []struct {
		method, target, body string
		hdr                  []string
		want                 int
	}{
		{"GET", "/api/v1/plan", "", nil, 200},
		{"GET", "/api/v1/plan?node=n1", "", nil, 200},
		{"GET", "/api/v1/plan?node=nosuch", "", nil, 404},
		{"GET", "/api/v1/explain/n1", "", nil, 200},
		{"GET", "/api/v1/explain/nosuch", "", nil, 404},
		{"GET", "/api/v1/explain/" + strings.Repeat("x", 300), "", nil, 400},
		{"GET", "/api/v1/report", "", nil, 200},
		{"POST", "/api/v1/plan", "", nil, 405},
		{"DELETE", "/api/v1/explain/n1", "", nil, 405},
		{"GET", "/api/v1/cycle", "", nil, 405},
		{"PUT", "/api/v1/cycle", "", nil, 405},
		{"POST", "/api/v1/cycle", "", nil, 202},
		{"POST", "/api/v1/cycle", strings.Repeat("x", 2048), nil, 413},
		{"GET", "/api/v1/plan", strings.Repeat("x", 2048), nil, 413},
		{"POST", "/api/v1/cycle", "", []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"POST", "/api/v1/cycle", "", []string{"Origin", "https://evil.example"}, 403},
	}
	for _, c := range cases {
		rec := call(h, c.method, c.target, c.body, c.hdr...)
		if rec.Code != c.want {
			t.Errorf("%s %.60s: %d %s, want %d", c.method, c.target, rec.Code, rec.Body, c.want)
		}
		if c.want == 405 && rec.Header().Get("Allow") == "" {
			t.Errorf("%s %s: 405 without Allow", c.method, c.target)
		}
		if c.want != 405 && c.want != 403 && rec.Header().Get(ops.EngineIDHeader) != "az1" {
			t.Errorf("%s %s: engine id header %q", c.method, c.target, rec.Header().Get(ops.EngineIDHeader))
		}
	}
	rec := call(h, "GET", "/api/v1/explain/nosuch", "")
	var e struct{ Error string }
	if json.Unmarshal(rec.Body.Bytes(), &e); !strings.Contains(e.Error, "unknown node") {
		t.Errorf("404 body %s", rec.Body)
	}
}

// Before the daemon gives the API its engine, and when the plan fails,
// the answer is 503, not a guess.
func TestAPINotReady(t *testing.T) {
	o := ops.New(nil)
	h := o.Handler()
	for _, p := range []string{"/api/v1/plan", "/api/v1/explain/n1"} {
		if rec := call(h, "GET", p, ""); rec.Code != 503 {
			t.Errorf("%s before SetAPI: %d %s", p, rec.Code, rec.Body)
		}
	}
	if rec := call(h, "POST", "/api/v1/cycle", ""); rec.Code != 503 {
		t.Errorf("cycle before SetAPI: %d", rec.Code)
	}
	o.SetAPI(&ops.API{Plan: func(context.Context) (ops.Plan, error) { return nil, ops.ErrNotReady }})
	if rec := call(h, "GET", "/api/v1/plan", ""); rec.Code != 503 {
		t.Errorf("plan refused: %d", rec.Code)
	}
}

// Requests that come while a plan is computed share it: one plan, every
// request answered.
func TestAPIOnePlanAtATime(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 10)
	var mu sync.Mutex
	running, most := 0, 0
	o := apiOps(func(context.Context) (ops.Plan, error) {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		started <- struct{}{}
		<-release
		mu.Lock()
		running--
		mu.Unlock()
		return stubPlan{[]string{"n1"}}, nil
	}, nil)
	h := o.Handler()
	const n = 8
	codes := make(chan int, n)
	for i := range n {
		target := "/api/v1/plan"
		if i%2 == 1 {
			target = "/api/v1/explain/n1"
		}
		go func() { codes <- call(h, "GET", target, "").Code }()
	}
	<-started
	close(release)
	for range n {
		if c := <-codes; c != 200 {
			t.Errorf("answer %d", c)
		}
	}
	// The requests may have come before or after the first plan ended;
	// never two at once.
	if most != 1 {
		t.Errorf("%d plans ran at once", most)
	}
	if p := o.PlansComputed(); p < 1 || p > n {
		t.Errorf("%d plans for %d requests", p, n)
	}
}

// A caller that leaves does not cut the plan short for the others.
func TestAPIPlanOutlivesItsCaller(t *testing.T) {
	release := make(chan struct{})
	var planCtx context.Context
	got := make(chan struct{})
	var once sync.Once
	o := apiOps(func(ctx context.Context) (ops.Plan, error) {
		once.Do(func() { planCtx = ctx; close(got) })
		<-release
		return stubPlan{[]string{"n1"}}, nil
	}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequest("GET", "/api/v1/plan", nil).WithContext(ctx)
	done := make(chan int)
	go func() {
		rec := httptest.NewRecorder()
		o.Handler().ServeHTTP(rec, req)
		done <- rec.Code
	}()
	<-got
	cancel()
	if c := <-done; c != 503 {
		t.Errorf("left caller: %d", c)
	}
	if planCtx.Err() != nil {
		t.Errorf("the plan's context ended with its first caller: %v", planCtx.Err())
	}
	other := make(chan int)
	go func() { other <- call(o.Handler(), "GET", "/api/v1/plan", "").Code }()
	close(release)
	if c := <-other; c != 200 {
		t.Errorf("second caller: %d", c)
	}
}

func TestAPICycleNowCoalescesAndReportCounts(t *testing.T) {
	pending := make(chan struct{}, 1)
	o := apiOps(nil, func() bool {
		select {
		case pending <- struct{}{}:
			return true
		default:
			return false
		}
	})
	h := o.Handler()
	for i, want := range []bool{true, false, false} {
		rec := call(h, "POST", "/api/v1/cycle", "")
		var got ops.CycleRequest
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 202 || got.Queued != want {
			t.Errorf("request %d: %d %s, want queued %v", i, rec.Code, rec.Body, want)
		}
	}
	if len(pending) != 1 {
		t.Errorf("%d requests pending, want 1", len(pending))
	}
	var last ops.LastReport
	json.Unmarshal(call(h, "GET", "/api/v1/report", "").Body.Bytes(), &last)
	if last.Cycles != 0 || last.Report != nil {
		t.Errorf("before any cycle: %+v", last)
	}
	for range 2 {
		o.CycleStarted()
		o.CycleDone(engine.Report{Nodes: 3, Errors: []engine.Error{}}, time.Now())
	}
	json.Unmarshal(call(h, "GET", "/api/v1/report", "").Body.Bytes(), &last)
	if last.Cycles != 2 || last.Report == nil || last.Report.Nodes != 3 || last.Outcome != ops.OK || last.End == nil {
		t.Errorf("after two cycles: %+v", last)
	}
}
