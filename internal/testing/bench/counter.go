package bench

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
)

// Counter is one request-counting proxy with a front door per side, so
// two clients are counted by the same code in the same run.
type Counter struct {
	mu    sync.Mutex
	count map[string]*Count
	srvs  []*httptest.Server
	logs  map[string][]Logged // sides being logged (LogRequests)
}

// Logged is one request a logged side sent, with Placement's status.
type Logged struct {
	Method, Path string
	Status       int
}

// Count is what one side sent since the last Take.
type Count struct {
	Total, GETs, Writes int
}

// NewCounter returns a counter with no sides.
func NewCounter() *Counter { return &Counter{count: map[string]*Count{}} }

// Side adds a front door named side forwarding to target and returns its URL.
func (c *Counter) Side(side, target string) (string, error) {
	u, err := url.Parse(target)
	if err != nil {
		return "", err
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	c.mu.Lock()
	c.count[side] = &Count{}
	c.mu.Unlock()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		n := c.count[side]
		n.Total++
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			n.GETs++
		} else {
			n.Writes++
		}
		_, logged := c.logs[side]
		c.mu.Unlock()
		if !logged {
			rp.ServeHTTP(w, r)
			return
		}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		rp.ServeHTTP(sw, r)
		c.mu.Lock()
		c.logs[side] = append(c.logs[side], Logged{r.Method, r.URL.Path, sw.status})
		c.mu.Unlock()
	}))
	c.srvs = append(c.srvs, srv)
	return srv.URL, nil
}

// Take returns side's count since the last Take and starts again.
func (c *Counter) Take(side string) Count {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := *c.count[side]
	*c.count[side] = Count{}
	return n
}

// Close stops every front door.
func (c *Counter) Close() {
	for _, s := range c.srvs {
		s.Close()
	}
}

// LogRequests starts (or, with on false, stops) logging side's requests.
func (c *Counter) LogRequests(side string, on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.logs == nil {
		c.logs = map[string][]Logged{}
	}
	if on {
		c.logs[side] = []Logged{}
	} else {
		delete(c.logs, side)
	}
}

// TakeLog returns side's logged requests since the last TakeLog.
func (c *Counter) TakeLog(side string) []Logged {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.logs[side]
	if l != nil {
		c.logs[side] = []Logged{}
	}
	return l
}

// statusWriter keeps the status an http.Handler answered.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}
