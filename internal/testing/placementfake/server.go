package placementfake

import (
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxMinor is the highest microversion of Placement 8.0: 1.39.
const maxMinor = 39

// Server is a fake Placement. It is an http.Handler, so it can be mounted
// anywhere; New also starts it on a loopback listener.
type Server struct {
	srv *httptest.Server

	mu sync.Mutex // guards st and the request log
	st *state
	lg requestLog

	faults faultSet
}

// Option configures a Server.
type Option func(*Server)

// WithSeed makes the generation sequence reproducible. The default seed is 1.
func WithSeed(seed int64) Option {
	return func(s *Server) { s.st = newState(seed) }
}

// New starts a fake Placement on 127.0.0.1. Call Close when done.
func New(opts ...Option) *Server {
	s := &Server{st: newState(1)}
	for _, o := range opts {
		o(s)
	}
	s.srv = httptest.NewServer(s)
	return s
}

// URL is the base URL, e.g. "http://127.0.0.1:41234", without a slash.
func (s *Server) URL() string { return s.srv.URL }

// Close stops the listener and drops open connections.
func (s *Server) Close() { s.srv.Close() }

// call is one request in flight.
type call struct {
	w     http.ResponseWriter
	r     *http.Request
	body  []byte
	minor int // microversion 1.minor; -1 until parsed
	reqID string
	args  []string // path parameters: provider uuid, class, trait, consumer
}

// ServeHTTP answers one Placement API request, faults first.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the client went away
	}
	entry := s.logStart(r, body)
	f := s.faults.match(r)
	if f.delay > 0 {
		t := time.NewTimer(f.delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
		}
	}
	if f.drop {
		s.logEnd(entry, 0, f.name)
		drop(w)
		return
	}
	cw := &statusWriter{ResponseWriter: w}
	c := &call{w: cw, r: r, body: body, minor: -1, reqID: newRequestID()}
	cw.Header().Set("X-Openstack-Request-Id", c.reqID)
	switch {
	case f.status != 0:
		c.minor = maxMinor // a proxy or a crash: keep the body simple
		c.fail(f.status, "", "placementfake: injected fault")
	default:
		s.applyOutOfBand(f, r)
		s.serve(c)
	}
	s.logEnd(entry, cw.status, f.name)
}

// serve checks auth and microversion, then routes. The order is the real
// middleware order: auth, microversion, route, policy, handler.
func (s *Server) serve(c *call) {
	isRoot := c.r.URL.Path == "/"
	if !isRoot && c.r.Header.Get("X-Auth-Token") == "" {
		c.failUnauthorized()
		return
	}
	minor, status, msg := parseVersion(c.r.Header.Values("OpenStack-API-Version"))
	if status != 0 {
		c.failVersion(status, msg)
		return
	}
	c.minor = minor
	h := c.w.Header()
	h.Set("Openstack-Api-Version", "placement 1."+strconv.Itoa(minor))
	h.Set("Vary", "openstack-api-version")

	methods, args := lookup(c.r.URL.Path)
	if methods == nil {
		c.fail(http.StatusNotFound, "", "")
		return
	}
	ep, ok := methods[c.r.Method]
	if !ok {
		h.Set("Allow", methods.allow())
		c.failDetail(http.StatusMethodNotAllowed, "",
			"The method "+c.r.Method+" is not allowed for this resource. \n\n The method specified is not allowed for this resource.")
		return
	}
	if !isRoot && c.r.Header.Get("X-Auth-Token") != "admin" {
		// noauth2 makes the token the user; only "admin" has the admin role.
		c.fail(http.StatusForbidden, "", "Policy does not allow placement:"+ep.policy+" to be performed.")
		return
	}
	if ep.json && !isJSON(c.r.Header.Get("Content-Type")) {
		ct := c.r.Header.Get("Content-Type")
		c.failDetail(http.StatusUnsupportedMediaType, "", "The request media type "+ct+
			" is not supported by this server. \n\n The media type "+ct+" is not supported, use application/json")
		return
	}
	c.args = args
	ep.serve(s, c)
}

// parseVersion reads "placement X.Y" out of OpenStack-API-Version headers.
// No header means 1.0, as on the real server.
func parseVersion(values []string) (minor, status int, msg string) {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			f := strings.Fields(part)
			if len(f) != 2 || !strings.EqualFold(f[0], "placement") {
				continue
			}
			if f[1] == "latest" {
				return maxMinor, 0, ""
			}
			maj, min, ok := strings.Cut(f[1], ".")
			a, err1 := strconv.Atoi(maj)
			b, err2 := strconv.Atoi(min)
			if !ok || err1 != nil || err2 != nil {
				// Python's int() complains about the first part it cannot read.
				bad := maj
				if err1 == nil {
					bad = min
				}
				return 0, http.StatusBadRequest, "Invalid microversion: invalid version string: " + f[1] +
					"; invalid literal for int() with base 10: '" + bad + "'"
			}
			if a != 1 || b > maxMinor || b < 0 {
				return 0, http.StatusNotAcceptable, "Invalid microversion: Unacceptable version header: " + f[1]
			}
			return b, 0, ""
		}
	}
	return 0, 0, ""
}

func isJSON(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/json")
}

// drop closes the connection without an answer, like a crashed server or a
// proxy cutting the line.
func drop(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

func newRequestID() string { return "req-" + newUUID() }

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// statusWriter remembers the status for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}
