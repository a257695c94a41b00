package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/rpengine/rpengine/engine"
)

// The daemon's local API (docs/OPERATIONS.md): the plan, the explanation
// of a node and the last report, read-only; and a request for a cycle
// now. It is served on server.listen beside the status page, behind the
// same Host check and web configuration.

// ErrUnknownNode is a Plan's answer about a node it does not know: 404.
var ErrUnknownNode = errors.New("unknown node")

// ErrNotReady is the answer before the daemon can plan (no setup loaded
// yet, or stopping): 503.
var ErrNotReady = errors.New("the daemon cannot plan now")

// Plan is one plan the daemon computed, shared by every request that
// waited for it.
type Plan interface {
	// Report is the plan as `engine plan -o json` prints it, of node
	// alone unless node is "".
	Report(node string) (any, error)
	// Explain is `engine explain NODE -o json`'s answer about node.
	Explain(ctx context.Context, node string) (any, error)
}

// API is what the daemon gives its local API.
type API struct {
	// Plan computes a plan: a dry cycle over a copy of the engine's
	// state, run between cycles. The API calls it at most once at a time;
	// requests that come meanwhile share its result.
	Plan func(ctx context.Context) (Plan, error)
	// CycleNow asks for a cycle at once, as SIGUSR1 does; it reports
	// false when a request was pending already (they merge into one).
	CycleNow func() bool
	// Allocations reads a node's allocations with their consumers, for
	// the node page (nil: the page says they were not read).
	Allocations func(ctx context.Context, uuid string) ([]Allocation, error)
	// Provider reads a node's provider as Placement holds it, for the
	// node page of a node the cycle did not read (quarantined: fully
	// reserved without a read; failed), so the page tells what explain
	// tells. Nil: the page says it was not read.
	Provider func(ctx context.Context, uuid string) (engine.Observed, error)
	// Key proves the answers are this daemon's (apiproof.go); nil: none
	// is proved, and the verbs compute their answers themselves.
	Key []byte
	// Pause and Resume act on one provider (engine pause, pause.go),
	// between cycles; nil: 503.
	Pause  func(ctx context.Context, node string, until time.Time, reason string) error
	Resume func(ctx context.Context, node string) error
}

// EngineIDHeader names the engine (engine.id) on every API answer, so a
// verb asks only the daemon of its own engine.
const EngineIDHeader = "Rpengine-Engine-Id"

// ConfigHeader and ConfigSHA256Header name, on every API answer, the
// config file the daemon's running setup was loaded from and the hash of
// its content then (Info.ConfigPath, Info.ConfigSHA256).
const (
	ConfigHeader       = "Rpengine-Config"
	ConfigSHA256Header = "Rpengine-Config-Sha256"
)

// Bounds of the API: a request body (none is expected), a node name, and
// the time one plan may take before its callers are answered 504.
const (
	maxAPIBody  = 1 << 10
	maxNodeName = 256
	PlanTimeout = 10 * time.Minute
)

// apiState is the API given by SetAPI and the plan in flight.
type apiState struct {
	mu     sync.Mutex
	api    *API
	flight *planFlight
	plans  int // computed, for tests and the doc's "one at a time"
}

type planFlight struct {
	done chan struct{}
	p    Plan
	err  error
}

// SetAPI makes the local API answer with a (nil: 503 for the plan and a
// cycle now).
func (o *Ops) SetAPI(a *API) {
	o.api.mu.Lock()
	defer o.api.mu.Unlock()
	o.api.api = a
}

// plan returns the plan in flight, or starts one: at most one is
// computed at a time, whoever asks. The plan runs on its own context,
// bounded by PlanTimeout, so a caller that leaves does not cut it short
// for those that wait with it.
func (o *Ops) plan(ctx context.Context) (Plan, error) {
	s := &o.api
	s.mu.Lock()
	f := s.flight
	if f == nil {
		if s.api == nil || s.api.Plan == nil {
			s.mu.Unlock()
			return nil, ErrNotReady
		}
		f = &planFlight{done: make(chan struct{})}
		s.flight, s.plans = f, s.plans+1
		compute := s.api.Plan
		go func() {
			pctx, cancel := context.WithTimeout(context.Background(), PlanTimeout)
			defer cancel()
			f.p, f.err = compute(pctx)
			s.mu.Lock()
			s.flight = nil
			s.mu.Unlock()
			close(f.done)
		}()
	}
	s.mu.Unlock()
	select {
	case <-f.done:
		return f.p, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (o *Ops) cycleNow() (queued bool, err error) {
	o.api.mu.Lock()
	a := o.api.api
	o.api.mu.Unlock()
	if a == nil || a.CycleNow == nil {
		return false, ErrNotReady
	}
	return a.CycleNow(), nil
}

// apiRoutes adds the API's routes to mux. Methods are the mux's: another
// method is 405 with Allow.
func (o *Ops) apiRoutes(mux *http.ServeMux) {
	mux.Handle("GET /api/v1/plan", o.bounded(o.servePlan))
	mux.Handle("GET /api/v1/explain/{node}", o.bounded(o.serveExplain))
	mux.Handle("GET /api/v1/report", o.bounded(o.serveReport))
	// The one request that acts; a browser on another site may not send
	// it (Sec-Fetch-Site, Origin), as it may not read the others.
	mux.Handle("POST /api/v1/cycle", http.NewCrossOriginProtection().Handler(o.bounded(o.serveCycle)))
	// Pauses act on one provider and prove the API key (pause.go).
	mux.Handle("POST /api/v1/pause/{node}", http.NewCrossOriginProtection().Handler(o.bounded(o.servePause)))
	mux.Handle("POST /api/v1/resume/{node}", http.NewCrossOriginProtection().Handler(o.bounded(o.serveResume)))
}

// bounded names the engine and refuses a request body over maxAPIBody:
// the API takes none.
func (o *Ops) bounded(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		info := o.info
		o.mu.Unlock()
		w.Header().Set(EngineIDHeader, info.EngineID)
		if info.ConfigPath != "" {
			w.Header().Set(ConfigHeader, info.ConfigPath)
			w.Header().Set(ConfigSHA256Header, info.ConfigSHA256)
		}
		o.prove(w, r)
		if r.ContentLength > maxAPIBody {
			apiError(w, http.StatusRequestEntityTooLarge, "request body over %d bytes: the API takes none", maxAPIBody)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxAPIBody)
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			apiError(w, http.StatusRequestEntityTooLarge, "request body over %d bytes: the API takes none", maxAPIBody)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (o *Ops) servePlan(w http.ResponseWriter, r *http.Request) {
	o.answerFromPlan(w, r, r.URL.Query().Get("node"), func(p Plan, node string) (any, error) { return p.Report(node) })
}

func (o *Ops) serveExplain(w http.ResponseWriter, r *http.Request) {
	o.answerFromPlan(w, r, r.PathValue("node"), func(p Plan, node string) (any, error) { return p.Explain(r.Context(), node) })
}

// answerFromPlan answers with what ask makes of a plan (shared with the
// callers waiting for the same one) about node, bounded in length.
func (o *Ops) answerFromPlan(w http.ResponseWriter, r *http.Request, node string, ask func(Plan, string) (any, error)) {
	if len(node) > maxNodeName {
		apiError(w, http.StatusBadRequest, "node: over %d bytes", maxNodeName)
		return
	}
	p, err := o.plan(r.Context())
	if err != nil {
		planError(w, err)
		return
	}
	v, err := ask(p, node)
	if err != nil {
		planError(w, err)
		return
	}
	apiJSON(w, v)
}

// LastReport is /api/v1/report: the last cycle's report as the status
// page keeps it (the counts and errors; the outcomes and writes of each
// node are on /node/{uuid}).
type LastReport struct {
	Cycles  int            `json:"cycles"` // finished since the daemon started
	Running bool           `json:"running"`
	Start   *time.Time     `json:"start,omitempty"`
	End     *time.Time     `json:"end,omitempty"`
	Outcome Outcome        `json:"outcome,omitempty"`
	Report  *engine.Report `json:"report"` // null before the first cycle ends
}

func (o *Ops) serveReport(w http.ResponseWriter, _ *http.Request) {
	o.mu.Lock()
	v := LastReport{Cycles: o.finished, Running: o.running}
	if n := len(o.cycles); n > 0 {
		c := o.cycles[n-1]
		v.Start, v.End, v.Outcome, v.Report = &c.Start, &c.End, c.Outcome, &c.Report
	}
	o.mu.Unlock()
	apiJSON(w, v)
}

// CycleRequest is POST /api/v1/cycle's answer.
type CycleRequest struct {
	// Queued is false when a request was pending already: requests merge
	// into one cycle, as SIGUSR1s do.
	Queued bool `json:"queued"`
}

func (o *Ops) serveCycle(w http.ResponseWriter, _ *http.Request) {
	queued, err := o.cycleNow()
	if err != nil {
		planError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusAccepted)
	json.NewEncoder(w).Encode(CycleRequest{Queued: queued})
}

func planError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, ErrUnknownNode):
		apiError(w, http.StatusNotFound, "%v", err)
	case errors.Is(err, context.DeadlineExceeded):
		apiError(w, http.StatusGatewayTimeout, "the plan took too long: %v", err)
	default: // not ready, stopping, or the plan failed
		apiError(w, http.StatusServiceUnavailable, "%v", err)
	}
}

// apiError answers {"error": "..."} with status.
func apiError(w http.ResponseWriter, status int, format string, a ...any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": fmt.Sprintf(format, a...)})
}

func apiJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}
