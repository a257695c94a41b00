package fakeironic

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Server is the fake. The zero value is not usable; call New.
type Server struct {
	mu       sync.Mutex
	nodes    []Node // in id order: creation order
	maxMinor int
	maxLimit int
	// BeforeList, if set, runs before each GET /v1/nodes (n counts them
	// from 1) and may answer instead (return true), e.g. with a 503, or
	// change the nodes (the fake's lock is not held).
	BeforeList func(w http.ResponseWriter, r *http.Request, n int) bool
	lists      int
	requests   []string
	cache      map[string][]byte // rendered pages until the nodes change
	base       string
	clock      int // milliseconds of updated_at past its epoch (Update)
}

// New returns a fake serving nodes at API version up to 1.maxMinor (21.4:
// 82), with pages capped at 1,000 like [api] max_limit.
func New(nodes []Node, maxMinor int) *Server {
	return &Server{nodes: slices.Clone(nodes), maxMinor: maxMinor, maxLimit: 1000, cache: map[string][]byte{}}
}

// SetMaxLimit changes [api] max_limit.
func (s *Server) SetMaxLimit(n int) {
	s.mu.Lock()
	s.maxLimit = n
	s.cache = map[string][]byte{}
	s.mu.Unlock()
}

// Requests returns the request URIs served so far.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Delete removes the node with uuid.
func (s *Server) Delete(uuid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nodes = slices.DeleteFunc(s.nodes, func(n Node) bool { return n.UUID == uuid })
	s.cache = map[string][]byte{}
}

// Insert adds n before position i of the id order (as if an earlier id
// were created: shifts later pages, duplicating a node across them).
func (s *Server) Insert(i int, n Node) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nodes = slices.Insert(s.nodes, i, n)
	s.cache = map[string][]byte{}
}

// Update changes the node with uuid as Ironic's database does on any
// UPDATE, with or without a notification: f, then updated_at moves (one
// millisecond past the newest, so the order holds whatever the clock).
func (s *Server) Update(uuid string, f func(*Node)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.nodes, func(n Node) bool { return n.UUID == uuid })
	if i < 0 {
		return
	}
	f(&s.nodes[i])
	s.clock++
	s.nodes[i].UpdatedAt = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(s.clock) * time.Millisecond).Format("2006-01-02T15:04:05.000000+00:00")
	s.cache = map[string][]byte{}
}

// Nodes returns a copy of the nodes.
func (s *Server) Nodes() []Node {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.nodes)
}

// ServeHTTP answers one Ironic API request and records it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.URL.RequestURI())
	s.base = "http://" + r.Host
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch p := strings.TrimSuffix(r.URL.Path, "/"); {
	case r.Method != http.MethodGet:
		w.WriteHeader(http.StatusMethodNotAllowed)
	case p == "":
		s.root(w)
	case p == "/v1":
		if s.version(w, r) >= 0 {
			w.Write([]byte(`{"id": "v1"}`))
		}
	case p == "/v1/nodes":
		s.list(w, r)
	case p == "/v1/nodes/detail":
		s.detail(w, r)
	case strings.HasPrefix(p, "/v1/nodes/"):
		s.show(w, r, strings.TrimPrefix(p, "/v1/nodes/"))
	default:
		w.WriteHeader(http.StatusNotFound)
		w.Write(errorBody("The resource could not be found."))
	}
}

func (s *Server) root(w http.ResponseWriter) {
	// The root has no version headers; only /v1 does.
	w.Write([]byte(`{"name": "OpenStack Ironic API", "default_version": {"id": "v1", "status": "CURRENT", ` +
		`"min_version": "1.1", "version": "1.` + itoa(s.maxMinor) + `"}}`))
}

func (s *Server) show(w http.ResponseWriter, r *http.Request, id string) {
	minor := s.version(w, r)
	if minor < 0 {
		return
	}
	s.mu.Lock()
	i := slices.IndexFunc(s.nodes, func(n Node) bool { return n.UUID == id || n.Name == id })
	var body []byte
	if i >= 0 {
		fields, bad := s.fields(r, minor)
		if bad != "" {
			s.mu.Unlock()
			notAcceptable(w, bad)
			return
		}
		body = appendNode(nil, &s.nodes[i], fields, s.base)
	}
	s.mu.Unlock()
	if i < 0 {
		w.WriteHeader(http.StatusNotFound)
		w.Write(errorBody("Node " + id + " could not be found."))
		return
	}
	w.Write(body)
}
