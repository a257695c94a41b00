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
		c.mu.Unlock()
		rp.ServeHTTP(w, r)
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
