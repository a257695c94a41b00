package faultproxy

import (
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"
)

// Faults says how the proxy misbehaves.
type Faults struct {
	// BadGateway is the fraction of requests answered 502 (0.2 = 20 %).
	BadGateway float64
	// AfterForward is the fraction of those 502s sent after the service
	// answered (its answer is dropped); the others never reach it.
	AfterForward float64
	// MinDelay and MaxDelay bound the delay added to every answer.
	MinDelay, MaxDelay time.Duration
	// Seed makes the fault sequence reproducible.
	Seed uint64
	// Delay, if set, adds the delay it returns for each request: a
	// service slow at some requests only (a big listing's pages).
	Delay func(*http.Request) time.Duration
	// Hold, if set, holds the service's answer back for the time it
	// returns: the answer is as of the request, delivered late (a slow
	// listing whose pages are older than what happens meanwhile).
	Hold func(*http.Request) time.Duration
}

// badGatewayBody is what the failing proxy in the field sent: a JSON
// title and nothing else.
const badGatewayBody = `{"errors": [{"status": 502, "title": "Bad Gateway"}]}`

// Proxy is a running fault-injecting proxy. It is safe for concurrent use.
type Proxy struct {
	srv    *httptest.Server
	rp     *httputil.ReverseProxy
	faults Faults

	mu       sync.Mutex
	rnd      *rand.Rand
	requests int
	injected int
	byPath   map[string]int
}

// New starts a proxy in front of target on 127.0.0.1. Call Close.
func New(target string, f Faults) (*Proxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	p := &Proxy{rp: httputil.NewSingleHostReverseProxy(u), faults: f,
		rnd: rand.New(rand.NewPCG(f.Seed, 1)), byPath: map[string]int{}}
	p.srv = httptest.NewServer(p)
	return p, nil
}

// URL is the proxy's base URL.
func (p *Proxy) URL() string { return p.srv.URL }

// Close stops the proxy.
func (p *Proxy) Close() { p.srv.Close() }

// Requests is how many requests reached the proxy; Injected how many it
// answered 502.
func (p *Proxy) Requests() (total, injected int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests, p.injected
}

// ByPath counts requests per URL path.
func (p *Proxy) ByPath() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.byPath))
	for k, v := range p.byPath {
		out[k] = v
	}
	return out
}

type plan struct {
	delay         time.Duration
	fail, forward bool
}

func (p *Proxy) next(r *http.Request) plan {
	var pl plan
	if p.faults.Delay != nil {
		pl.delay = p.faults.Delay(r)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests++
	p.byPath[r.URL.Path]++
	pl.delay += p.faults.MinDelay
	if spread := p.faults.MaxDelay - p.faults.MinDelay; spread > 0 {
		pl.delay += time.Duration(p.rnd.Int64N(int64(spread)))
	}
	if p.rnd.Float64() < p.faults.BadGateway {
		p.injected++
		pl.fail, pl.forward = true, p.rnd.Float64() < p.faults.AfterForward
	}
	return pl
}

// ServeHTTP forwards r, or answers it with the fault its turn in the plan
// says.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	pl := p.next(r)
	t := time.NewTimer(pl.delay)
	select {
	case <-t.C:
	case <-r.Context().Done():
		t.Stop()
		return
	}
	if !pl.fail {
		p.forward(w, r)
		return
	}
	if pl.forward {
		// The service acts on the request; its answer is lost.
		rec := httptest.NewRecorder()
		p.rp.ServeHTTP(rec, r)
		io.Copy(io.Discard, rec.Result().Body)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadGateway)
	io.WriteString(w, badGatewayBody)
}

// forward sends r on; with Hold, the answer waits before it is written.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request) {
	var hold time.Duration
	if p.faults.Hold != nil {
		hold = p.faults.Hold(r)
	}
	if hold <= 0 {
		p.rp.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	p.rp.ServeHTTP(rec, r)
	t := time.NewTimer(hold)
	select {
	case <-t.C:
	case <-r.Context().Done():
		t.Stop()
		return
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}
