package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// requestLog records every Placement request of every engine, each engine
// through its own logging proxy, so a write is attributed to its engine
// and timed where Placement sees it.
type requestLog struct {
	mu      sync.Mutex
	entries []logEntry
}

type logEntry struct {
	engine, method, path, provider string
	at                             time.Time
	status                         int
}

// write says whether e changed a provider: anything but a read of one, a
// trait or class creation, or an allocation.
func (e logEntry) write() bool {
	return e.method != "GET" && strings.HasPrefix(e.path, "/resource_providers")
}

func (e logEntry) String() string {
	return fmt.Sprintf("%s %s %s %s -> %d", e.at.Format("15:04:05.000"), e.engine, e.method, e.path, e.status)
}

// proxy starts a reverse proxy to target that logs as engine.
func (l *requestLog) proxy(t *testing.T, target, engine string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e := logEntry{engine: engine, method: r.Method, path: r.URL.Path, at: time.Now(), provider: providerOf(r)}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		rp.ServeHTTP(sw, r)
		e.status = sw.status
		l.mu.Lock()
		l.entries = append(l.entries, e)
		l.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// providerOf is the provider uuid a request is about: from the path, or
// from the body of POST /resource_providers.
func providerOf(r *http.Request) string {
	rest, ok := strings.CutPrefix(r.URL.Path, "/resource_providers/")
	if ok {
		uuid, _, _ := strings.Cut(rest, "/")
		return uuid
	}
	if r.Method != "POST" || r.URL.Path != "/resource_providers" {
		return ""
	}
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	var body struct{ UUID string }
	_ = json.Unmarshal(b, &body)
	return body.UUID
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) { w.status = code; w.ResponseWriter.WriteHeader(code) }

func (l *requestLog) snapshot() []logEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.entries)
}

// lastWrite is the time of the last write of any engine.
func (l *requestLog) lastWrite() time.Time {
	var last time.Time
	for _, e := range l.snapshot() {
		if e.write() && e.at.After(last) {
			last = e.at
		}
	}
	return last
}

// writesBy lists engine's writes at or after since.
func (l *requestLog) writesBy(engine string, since time.Time) []logEntry {
	var out []logEntry
	for _, e := range l.snapshot() {
		if e.engine == engine && e.write() && !e.at.Before(since) {
			out = append(out, e)
		}
	}
	return out
}

// checkNoDeletes: scale-out must never delete a provider.
func (l *requestLog) checkNoDeletes(t *testing.T) {
	t.Helper()
	for _, e := range l.snapshot() {
		if e.method == "DELETE" && e.provider != "" && strings.Count(e.path, "/") == 2 {
			t.Errorf("a provider was deleted: %s", e)
		}
	}
}

// checkNoPingPong: for each provider, no engine writes it again within
// two intervals of its own earlier write with another engine's write in
// between (X, Y, X). Two engines that both believed they held a node would
// write it in turns; a stale holder writing after a takeover would too.
// A hand-over itself may be quick (peers wake on etcd's changes), but a
// hand-back needs the other engine to leave and return, which takes
// longer than two intervals here. Writes before since are left out: an
// engine cut off from etcd and healed takes its share back at once.
func (l *requestLog) checkNoPingPong(t *testing.T, interval time.Duration, since time.Time) {
	t.Helper()
	byProvider := map[string][]logEntry{}
	for _, e := range l.snapshot() {
		if e.write() && e.provider != "" && e.status < 300 && !e.at.Before(since) {
			byProvider[e.provider] = append(byProvider[e.provider], e)
		}
	}
	handovers := 0
	for p, es := range byProvider {
		slices.SortFunc(es, func(a, b logEntry) int { return a.at.Compare(b.at) })
		last := map[string]logEntry{} // engine → its latest write so far
		for i, e := range es {
			if i > 0 && es[i-1].engine != e.engine {
				handovers++
				if prev, ok := last[e.engine]; ok && e.at.Sub(prev.at) < 2*interval {
					t.Errorf("provider %s written in turns by two engines within %s:\n  %s\n  %s\n  %s",
						p, 2*interval, prev, es[i-1], e)
				}
			}
			last[e.engine] = e
		}
	}
	t.Logf("request log: %d providers written, %d hand-overs between engines, none in turns within %s",
		len(byProvider), handovers, 2*interval)
}
