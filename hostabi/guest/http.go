package guest

import (
	"encoding/json"
	"fmt"

	"github.com/rpengine/rpengine/hostabi"
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
}

// HTTPResponse is the answer. An HTTP error status (404, 503) is a
// response, not an error; Header keys are canonical (textproto) and
// repeated headers are joined with ", ".
type HTTPResponse struct {
	Status int
	Header map[string]string
	Body   []byte
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
func encodeHTTPRequest(req HTTPRequest) []byte {
	head, _ := json.Marshal(hostabi.HTTPRequestHead{
		Service: req.Service, Method: req.Method, Path: req.Path, Header: req.Header,
	})
	return hostabi.AppendFrame(make([]byte, 0, 4+len(head)+len(req.Body)), head, req.Body)
}

// decodeHTTPResponse reads the response frame; the body aliases frame.
func decodeHTTPResponse(req HTTPRequest, frame []byte) (HTTPResponse, error) {
	rawHead, body, err := hostabi.SplitFrame(frame)
	if err != nil {
		return HTTPResponse{}, fmt.Errorf("%s %s %s: bad response frame from host: %w", req.Method, req.Service, req.Path, err)
	}
	var head hostabi.HTTPResponseHead
	if err := json.Unmarshal(rawHead, &head); err != nil {
		return HTTPResponse{}, fmt.Errorf("%s %s %s: bad response head from host: %w", req.Method, req.Service, req.Path, err)
	}
	if head.Error != "" {
		return HTTPResponse{}, fmt.Errorf("%s %s %s: %s", req.Method, req.Service, req.Path, head.Error)
	}
	return HTTPResponse{Status: head.Status, Header: head.Header, Body: body}, nil
}
