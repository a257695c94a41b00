package ironic

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rpengine/rpengine/hostabi/guest"
)

// Transport performs one HTTP request: guest.HTTP in the plugin.
type Transport func(guest.HTTPRequest) (guest.HTTPResponse, error)

// GuestGCPercent is the GOGC the Wasm plugin runs with. Mapping 10,000
// nodes in the guest takes about a third less time at 400 than at the
// default 100 (garbage collection and its write barriers cost several
// times more in Wasm), and the GOMEMLIMIT the host sets below the memory
// limit still bounds the heap (hostabi/RATIONALE.md, "JSON projection:
// measured").
const GuestGCPercent = 400

// Services the plugin asks the host for, by the names an operator grants
// in [plugin.services].
const (
	serviceBaremetal = "baremetal"
	serviceCompute   = "compute"
)

// Client talks to Ironic (and Nova) for one plugin instance. It is not
// safe for concurrent use; the host serialises calls into a plugin.
type Client struct {
	cfg    Config
	http   Transport
	decode PageDecoder
	// project is the node page projection the host is asked to run on
	// each page (nil: bodies come raw, for decode); decode still serves
	// a host that sends the body (one older than projected responses).
	project *guest.Projection
	log     func(level int32, msg string)

	// ver is the negotiated version; zero until the first call needs it
	// and again after the server refuses it, so a changed server is
	// re-read instead of trusted.
	ver version
	// noRecent: Ironic refused the listing sorted by updated_at once, so
	// node reads take a GET each (readrecent.go).
	noRecent bool
	// want is the optional node fields of the call being served (nil:
	// none), set by serve at its start.
	want *want
	// proofPages is the page count of the last listing of all node uuids:
	// past that many nodes to prove, a listing costs fewer requests.
	proofPages int
}

// Option changes a Client.
type Option func(*Client)

// WithLog sends the client's warnings to log (guest.Log in the plugin).
func WithLog(log func(level int32, msg string)) Option { return func(c *Client) { c.log = log } }

// New returns a client for cfg that sends its requests through t.
func New(cfg Config, t Transport, opts ...Option) *Client {
	c := &Client{cfg: cfg, http: t, decode: ProjectPage, project: &nodePage, log: func(int32, string) {}}
	for _, o := range opts {
		o(c)
	}
	return c
}

func (c *Client) warnf(format string, args ...any) {
	c.log(4, fmt.Sprintf(format, args...)) // hostabi.LevelWarn
}

// get sends a GET to Ironic at the negotiated version ("" = none).
func (c *Client) get(path string, v version) (guest.HTTPResponse, error) {
	return c.getProjected(path, v, nil, nil)
}

// getProjected is get asking the host to project a 2xx body by p (nil:
// none), and to keep its projection by keep (nil: none; guest.HTTPRequest.Keep).
func (c *Client) getProjected(path string, v version, p, keep *guest.Projection) (guest.HTTPResponse, error) {
	h := map[string]string{"Accept": "application/json"}
	if !v.zero() {
		h[versionHeader] = v.String()
	}
	resp, err := c.http(guest.HTTPRequest{Service: serviceBaremetal, Method: "GET", Path: path, Header: h, Project: p, Keep: keep})
	if err != nil {
		return resp, fmt.Errorf("GET %s: %w", path, err)
	}
	return resp, nil
}

// header finds a response header whatever its case.
func header(resp guest.HTTPResponse, name string) string {
	if v, ok := resp.Header[name]; ok {
		return v
	}
	for k, v := range resp.Header {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// APIError is an HTTP error status from Ironic or Nova, with the
// server's own message.
type APIError struct {
	Method, Path string
	Status       int
	Message      string
}

// Error names the request and Ironic's answer.
func (e *APIError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.Method, e.Path, e.Status, e.Message)
}

func apiError(path string, resp guest.HTTPResponse) *APIError {
	return &APIError{Method: "GET", Path: path, Status: resp.Status, Message: faultString(resp.Body)}
}

// faultString extracts the message of an OpenStack error body. Ironic nests
// JSON in a string: {"error_message": "{\"faultstring\": \"...\"}"} or, for
// version errors, {"error_message": "{\"description\": \"...\"}"}; Nova
// says {"itemNotFound": {"message": "..."}}.
func faultString(body []byte) string {
	var outer map[string]json.RawMessage
	if json.Unmarshal(body, &outer) != nil {
		return clip(string(body))
	}
	if raw, ok := outer["error_message"]; ok {
		var inner string
		if json.Unmarshal(raw, &inner) == nil {
			var f struct{ Faultstring, Description string }
			if json.Unmarshal([]byte(inner), &f) == nil && f.Faultstring+f.Description != "" {
				return f.Faultstring + f.Description
			}
			return clip(inner)
		}
	}
	for _, raw := range outer {
		var m struct{ Message string }
		if json.Unmarshal(raw, &m) == nil && m.Message != "" {
			return m.Message
		}
	}
	return clip(string(body))
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}
