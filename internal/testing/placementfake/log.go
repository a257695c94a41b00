package placementfake

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path"
	"strconv"
)

// Request is one logged request.
type Request struct {
	Method string
	Path   string
	Query  string // raw query, without "?"
	Body   []byte
	Status int    // 0 if the connection was dropped
	Fault  string // the injected faults that fired, "" if none

	// Generations holds every generation in the request body
	// (resource_provider_generation, consumer_generation, generation),
	// as sent. Unknown holds those the server had never returned before
	// this request arrived: a client that invents or counts generations
	// shows up here.
	Generations []string
	Unknown     []string
}

type requestLog struct {
	entries []*Request // pointers: logEnd still finds its entry after a ResetRequests
}

func (s *Server) logStart(r *http.Request, body []byte) *Request {
	gens := bodyGenerations(body)
	s.mu.Lock()
	defer s.mu.Unlock()
	e := &Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Body: body, Generations: gens}
	for _, g := range gens {
		v, err := strconv.ParseInt(g, 10, 64)
		if err != nil || !s.st.returned[v] {
			e.Unknown = append(e.Unknown, g)
		}
	}
	s.lg.entries = append(s.lg.entries, e)
	return e
}

func (s *Server) logEnd(e *Request, status int, fault string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e.Status, e.Fault = status, fault
}

// Requests returns a copy of the log, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.lg.entries))
	for i, e := range s.lg.entries {
		out[i] = *e
	}
	return out
}

// Find returns the logged requests with this method ("" for any) whose path
// matches the path.Match pattern, e.g. Find("DELETE", "/resource_providers/*/inventories").
func (s *Server) Find(method, pattern string) []Request {
	var out []Request
	for _, e := range s.Requests() {
		if ok, _ := path.Match(pattern, e.Path); ok && (method == "" || method == e.Method) {
			out = append(out, e)
		}
	}
	return out
}

// ResetRequests empties the log.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lg.entries = nil
}

// SentUnknownGenerations lists, in order, every generation a client sent
// that the server had not returned to anyone before that request. It is
// empty for a client that treats generations as opaque tokens.
func (s *Server) SentUnknownGenerations() []string {
	var out []string
	for _, e := range s.Requests() {
		out = append(out, e.Unknown...)
	}
	return out
}

var generationKeys = map[string]bool{
	"resource_provider_generation": true, "consumer_generation": true, "generation": true,
}

// bodyGenerations digs the generation values out of a JSON body, keeping
// their text as sent (so 4.6e+18 from a float64 round trip stays visible).
func bodyGenerations(body []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if n, ok := x.(json.Number); ok && generationKeys[k] {
					out = append(out, n.String())
					continue
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return out
}
