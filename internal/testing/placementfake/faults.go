package placementfake

import (
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Fault makes matching requests misbehave. Zero match fields match every
// request. When it fires, Delay comes first; Drop and Status then end the
// request unserved; Conflict and Vanish change state just before it is
// served. Several faults may fire for one request.
type Fault struct {
	Method string // "" matches any method
	Path   string // path.Match pattern on the URL path, e.g. "/resource_providers/*/inventories"; "" matches any
	Every  int    // fire on every Every-th matching request; 0 and 1 mean every one
	Times  int    // stop after firing this many times; 0 means no limit
	After  int    // let this many matching requests pass first (a crash after them)

	Delay    time.Duration // wait before answering (stops early if the client gives up)
	Drop     bool          // close the connection without an answer
	Status   int           // answer this status (e.g. 503) with an error body, serve nothing
	Conflict bool          // another writer bumps the path's provider (or consumer) generation first
	Vanish   bool          // the path's provider is deleted out of band first, allocations and all
}

// Injected is a live fault. It is safe to use from any goroutine.
type Injected struct {
	set   *faultSet
	fault Fault
	seen  int // matching requests
	fired int
}

// Fired says how many times the fault has fired so far.
func (in *Injected) Fired() int {
	in.set.mu.Lock()
	defer in.set.mu.Unlock()
	return in.fired
}

// Remove stops the fault.
func (in *Injected) Remove() {
	in.set.mu.Lock()
	defer in.set.mu.Unlock()
	for i, f := range in.set.list {
		if f == in {
			in.set.list = append(in.set.list[:i:i], in.set.list[i+1:]...)
			return
		}
	}
}

// Inject adds a fault; it applies from the next request on.
func (s *Server) Inject(f Fault) *Injected {
	in := &Injected{set: &s.faults, fault: f}
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.list = append(s.faults.list, in)
	return in
}

// ClearFaults removes every injected fault.
func (s *Server) ClearFaults() {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.list = nil
}

// faultSet has its own lock so that a delayed request never holds the
// state lock while it sleeps.
type faultSet struct {
	mu   sync.Mutex
	list []*Injected
}

// firing is the sum of the faults that fired for one request.
type firing struct {
	delay                  time.Duration
	drop, conflict, vanish bool
	status                 int
	name                   string // for the request log, e.g. "conflict,status=503"
}

func (fs *faultSet) match(r *http.Request) firing {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var out firing
	var names []string
	for _, in := range fs.list {
		f := in.fault
		if f.Method != "" && f.Method != r.Method {
			continue
		}
		if ok, _ := path.Match(f.Path, r.URL.Path); f.Path != "" && !ok {
			continue
		}
		in.seen++
		if in.seen <= f.After {
			continue
		}
		if (f.Every > 1 && in.seen%f.Every != 0) || (f.Times > 0 && in.fired >= f.Times) {
			continue
		}
		in.fired++
		out.delay += f.Delay
		out.drop = out.drop || f.Drop
		out.conflict = out.conflict || f.Conflict
		out.vanish = out.vanish || f.Vanish
		if f.Status != 0 && out.status == 0 {
			out.status = f.Status
		}
		names = append(names, f.describe())
	}
	out.name = strings.Join(names, ",")
	return out
}

func (f Fault) describe() string {
	var parts []string
	if f.Delay > 0 {
		parts = append(parts, "delay="+f.Delay.String())
	}
	if f.Drop {
		parts = append(parts, "drop")
	}
	if f.Status != 0 {
		parts = append(parts, "status="+strconv.Itoa(f.Status))
	}
	if f.Conflict {
		parts = append(parts, "conflict")
	}
	if f.Vanish {
		parts = append(parts, "vanish")
	}
	return strings.Join(parts, "+")
}

// applyOutOfBand plays the other writer for Conflict and Vanish.
func (s *Server) applyOutOfBand(f firing, r *http.Request) {
	if !f.conflict && !f.vanish {
		return
	}
	p := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if len(p) < 2 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch p[0] {
	case "resource_providers":
		rp := s.st.providers[p[1]]
		if rp == nil {
			return
		}
		if f.conflict {
			s.st.bump(rp)
		}
		if f.vanish {
			s.st.removeProvider(rp)
		}
	case "allocations":
		if con := s.st.consumers[p[1]]; con != nil && f.conflict {
			con.gen = s.st.newGen(con.gen)
		}
	}
}
