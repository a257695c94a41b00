package guest

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/projection"
)

// HTTPRequest is one request to a service the operator granted the plugin
// in [plugin.services]. The host resolves Service to its endpoint and adds
// the credentials: a plugin never sees a URL's secret or a token.
type HTTPRequest struct {
	Service string            // e.g. "baremetal", "compute": must be granted in [plugin.services]
	Method  string            // "" means GET
	Path    string            // relative to the service endpoint, may include the query, e.g. "/v1/nodes?limit=1000"
	Header  map[string]string // e.g. "X-OpenStack-Ironic-API-Version": "1.82"
	Body    []byte
	// Project, if set, asks the host to project a 2xx JSON answer by it
	// (HTTPResponse.Projected), so the body never enters the plugin.
	Project *Projection
	// Keep, with Project, asks the host to project a 2xx answer by Keep
	// and keep it for the rest of the operation (HTTPResponse.Ref), and
	// to send Project's part of it (Project within Keep): a list_nodes
	// answer can then refer to records the plugin never read
	// (RefLister). Hosts that cannot project by Project alone.
	Keep *Projection
}

// HTTPResponse is the answer. An HTTP error status (404, 503) is a
// response, not an error; Header keys are canonical (textproto) and
// repeated headers are joined with ", ".
type HTTPResponse struct {
	Status int
	Header map[string]string
	Body   []byte
	// Projected is the body's records when the request asked for them
	// (HTTPRequest.Project) and the host projected a 2xx answer; Body is
	// then nil. A host that predates projected responses sends the body
	// instead, and so does any host for another status: use Records,
	// which projects Body itself then.
	Projected *Records
	// ProjectErr is why a 2xx body could not be projected as asked (not
	// JSON, not the projection's shape); Projected and Body are nil.
	ProjectErr error
	// Ref is the host's number for the projection it kept (HTTPRequest.Keep),
	// 0 if it kept none: what a hostabi.NodeRun names.
	Ref uint32
}

// Records returns the answer's records under p: the host's projection if
// it made one, else Body projected now (Project).
func (r HTTPResponse) Records(p Projection) (Records, error) {
	switch {
	case r.ProjectErr != nil:
		return Records{}, r.ProjectErr
	case r.Projected != nil:
		return *r.Projected, nil
	}
	return Project(r.Body, p)
}

// HTTP performs req through the host. It returns an error when the host
// refused the request (service not granted, response over the size cap,
// deadline) or could not complete it (connection refused, timeout). Under
// GOOS=wasip1 it calls the host; in native builds it calls the function
// given to SetHTTPForTest.
func HTTP(req HTTPRequest) (HTTPResponse, error) {
	if req.Method == "" {
		req.Method = "GET"
	}
	return roundTrip(req)
}

// encodeHTTPRequest is the request frame of the http_request import.
func encodeHTTPRequest(req HTTPRequest) ([]byte, error) {
	h := requestHead{Service: req.Service, Method: req.Method, Path: req.Path, Header: req.Header}
	for i, p := range [...]struct {
		from *Projection
		to   *json.RawMessage
	}{{req.Project, &h.Project}, {req.Keep, &h.Keep}} {
		if p.from != nil {
			raw, err := specs[i].json(*p.from)
			if err != nil {
				return nil, fmt.Errorf("%s %s %s: %w", req.Method, req.Service, req.Path, err)
			}
			*p.to = raw
		}
	}
	head, ok := h.appendFast(make([]byte, 0, 256+len(h.Path)+len(h.Project)+len(h.Keep)))
	if !ok {
		head, _ = json.Marshal(h)
	}
	return hostabi.AppendFrame(make([]byte, 0, 4+len(head)+len(req.Body)), head, req.Body), nil
}

// requestHead is hostabi.HTTPRequestHead with its projections already
// encoded (the same JSON, TestRequestHeadIsHTTPRequestHead).
type requestHead struct {
	Service string            `json:"service"`
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Header  map[string]string `json:"header,omitempty"`
	Project json.RawMessage   `json:"project,omitempty"`
	Keep    json.RawMessage   `json:"keep,omitempty"`
}

// specs remember the JSON of the last projection sent as project and as
// keep: a plugin sends the same ones page after page, and encoding them
// with encoding/json each time cost a guest more than the page's merge.
var specs [2]specCache

type specCache struct {
	mu  sync.Mutex
	p   Projection
	raw json.RawMessage
}

func (c *specCache) json(p Projection) (json.RawMessage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.raw != nil && p.Array == c.p.Array && slices.Equal(p.Fields, c.p.Fields) && slices.Equal(p.Top, c.p.Top) {
		return c.raw, nil
	}
	spec, err := projection.ToSpec(p)
	if err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(spec)
	c.p, c.raw = Projection{Array: p.Array, Fields: slices.Clone(p.Fields), Top: slices.Clone(p.Top)}, raw
	return raw, nil
}

// decodeHTTPResponse reads the response frame; the body aliases frame.
func decodeHTTPResponse(req HTTPRequest, frame []byte) (HTTPResponse, error) {
	rawHead, body, err := hostabi.SplitFrame(frame)
	if err != nil {
		return HTTPResponse{}, fmt.Errorf("%s %s %s: bad response frame from host: %w", req.Method, req.Service, req.Path, err)
	}
	head, ok := fastResponseHead(rawHead)
	if !ok {
		head = hostabi.HTTPResponseHead{}
		if err := json.Unmarshal(rawHead, &head); err != nil {
			return HTTPResponse{}, fmt.Errorf("%s %s %s: bad response head from host: %w", req.Method, req.Service, req.Path, err)
		}
	}
	if head.Error != "" {
		return HTTPResponse{}, fmt.Errorf("%s %s %s: %s", req.Method, req.Service, req.Path, head.Error)
	}
	resp := HTTPResponse{Status: head.Status, Header: head.Header, Body: body}
	if head.Projected {
		r, err := projection.ParseWire(body)
		resp.Body, resp.Projected, resp.ProjectErr = nil, &r, err
		if err != nil {
			resp.Projected = nil
		} else {
			resp.Ref = head.Ref
		}
	}
	return resp, nil
}
