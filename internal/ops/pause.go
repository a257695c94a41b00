package ops

import (
	"context"
	"crypto/hmac"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rpengine/rpengine/engine"
)

// An operator's pause of one provider through the local API (engine
// pause / engine resume, engine/pause.go). Unlike the read-only routes,
// these act: the caller proves it can read the daemon's API key
// (RequestProofHeader), so another user of the host cannot stop the
// engine from correcting a node.

// RequestProofHeader carries "UNIXTIME.HMAC": the HMAC, under the API
// key, of RequestProofText of the request at that time.
const RequestProofHeader = "Rpengine-Request-Proof"

// proofSkew is how far a request's time may be from the daemon's.
const proofSkew = time.Minute

// RequestProofText is what a request proof signs: method, path with its
// query, and the time.
func RequestProofText(method, pathAndQuery string, at int64) string {
	return method + "\n" + pathAndQuery + "\n" + strconv.FormatInt(at, 10)
}

// RequestProof is the header value proving a request made at at.
func RequestProof(key []byte, method, pathAndQuery string, at int64) string {
	return strconv.FormatInt(at, 10) + "." + Proof(key, RequestProofText(method, pathAndQuery, at))
}

// ErrNotPausable is a pause the engine refused for what was asked (not a
// uuid, a time in the past, a reason too long): 400.
var ErrNotPausable = errors.New("not pausable")

// authorized says whether r proves the API key, and why not.
func (o *Ops) authorized(r *http.Request) (int, string) {
	o.api.mu.Lock()
	var key []byte
	if o.api.api != nil {
		key = o.api.api.Key
	}
	o.api.mu.Unlock()
	if len(key) == 0 {
		return http.StatusServiceUnavailable, "the daemon has no API key (engine.state_file = \"none\"): pauses are not taken"
	}
	ts, mac, ok := strings.Cut(r.Header.Get(RequestProofHeader), ".")
	at, err := strconv.ParseInt(ts, 10, 64)
	if !ok || err != nil {
		return http.StatusForbidden, "no request proof: send " + RequestProofHeader + " (engine pause does)"
	}
	if d := o.now().Sub(time.Unix(at, 0)); d > proofSkew || d < -proofSkew {
		return http.StatusForbidden, "the request proof's time is more than a minute off the daemon's"
	}
	want := Proof(key, RequestProofText(r.Method, r.URL.RequestURI(), at))
	if !hmac.Equal([]byte(mac), []byte(want)) {
		return http.StatusForbidden, "the request proof does not prove the daemon's API key"
	}
	return 0, ""
}

// PauseAnswer is the answer of the pause and resume routes.
type PauseAnswer struct {
	Node   string     `json:"node"`
	Paused bool       `json:"paused"`
	Until  *time.Time `json:"until,omitempty"`
	Reason string     `json:"reason,omitempty"`
}

func (o *Ops) servePause(w http.ResponseWriter, r *http.Request) {
	until, err := time.Parse(time.RFC3339, r.URL.Query().Get("until"))
	if err != nil {
		apiError(w, http.StatusBadRequest, "until: %v", err)
		return
	}
	reason := r.URL.Query().Get("reason")
	o.act(w, r, func(ctx context.Context, a *API, node string) error { return a.Pause(ctx, node, until, reason) },
		PauseAnswer{Paused: true, Until: &until, Reason: reason})
}

func (o *Ops) serveResume(w http.ResponseWriter, r *http.Request) {
	o.act(w, r, func(ctx context.Context, a *API, node string) error { return a.Resume(ctx, node) }, PauseAnswer{})
}

// act runs a pause or a resume for an authorized request.
func (o *Ops) act(w http.ResponseWriter, r *http.Request, do func(context.Context, *API, string) error, answer PauseAnswer) {
	if status, why := o.authorized(r); status != 0 {
		apiError(w, status, "%s", why)
		return
	}
	node := r.PathValue("node")
	if len(node) > maxNodeName {
		apiError(w, http.StatusBadRequest, "node: over %d bytes", maxNodeName)
		return
	}
	o.api.mu.Lock()
	a := o.api.api
	o.api.mu.Unlock()
	if a == nil || a.Pause == nil || a.Resume == nil {
		apiError(w, http.StatusServiceUnavailable, "%v", ErrNotReady)
		return
	}
	switch err := do(r.Context(), a, node); {
	case errors.Is(err, engine.ErrNotManaged):
		apiError(w, http.StatusNotFound, "%v", err)
	case errors.Is(err, ErrNotPausable):
		apiError(w, http.StatusBadRequest, "%v", err)
	case err != nil:
		apiError(w, http.StatusServiceUnavailable, "%v", err)
	default:
		answer.Node = node
		apiJSON(w, answer)
	}
}

// pauseMetrics are the series of pauses, from each full cycle's report.
type pauseMetrics struct {
	paused, overdue prometheus.Gauge
}

func (m *Metrics) registerPauses() {
	m.pauses = pauseMetrics{
		paused: prometheus.NewGauge(prometheus.GaugeOpts{Name: "rpengine_paused_nodes",
			Help: "Providers an operator paused (engine pause): nothing written to them."}),
		overdue: prometheus.NewGauge(prometheus.GaugeOpts{Name: "rpengine_pauses_overdue",
			Help: "Paused providers past the time the operator meant to resume them."}),
	}
	m.reg.MustRegister(m.pauses.paused, m.pauses.overdue)
}

func (p pauseMetrics) set(r engine.Report) {
	p.paused.Set(float64(r.Paused))
	p.overdue.Set(float64(r.PausesOverdue))
}

// PauseError wraps err as a refusal of what was asked (400).
func PauseError(err error) error { return fmt.Errorf("%w: %w", ErrNotPausable, err) }
