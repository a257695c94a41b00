//go:build !wasip1

package guest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/textproto"
	"sync"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/projection"
)

var (
	testHTTPMu sync.Mutex
	testHTTP   func(HTTPRequest) (HTTPResponse, error)
)

// SetHTTPForTest makes HTTP call fn in native (non-wasip1) builds, so that
// plugin code can be unit-tested without a host; nil removes it. In
// wasip1 builds it does nothing.
//
// The request reaches fn, and the answer comes back, through the same
// frames the host uses: fn sees what the host would see, and header keys
// of the answer are canonicalised as the host does.
func SetHTTPForTest(fn func(HTTPRequest) (HTTPResponse, error)) {
	testHTTPMu.Lock()
	defer testHTTPMu.Unlock()
	testHTTP = fn
}

func roundTrip(req HTTPRequest) (HTTPResponse, error) {
	testHTTPMu.Lock()
	fn := testHTTP
	testHTTPMu.Unlock()
	if fn == nil {
		return HTTPResponse{}, errors.New("guest.HTTP: no host in a native build; call guest.SetHTTPForTest in the test")
	}
	frame, err := encodeHTTPRequest(req)
	if err != nil {
		return HTTPResponse{}, err
	}
	wire, err := decodeHTTPRequest(frame)
	if err != nil {
		return HTTPResponse{}, err
	}
	resp, err := fn(wire)
	if err == nil && (resp.Projected != nil || resp.ProjectErr != nil) {
		return resp, nil // fn is a host that projected already
	}
	head := hostabi.HTTPResponseHead{Status: resp.Status}
	if err != nil {
		head = hostabi.HTTPResponseHead{Error: err.Error()}
	} else if len(resp.Header) > 0 {
		head.Header = make(map[string]string, len(resp.Header))
		for k, v := range resp.Header {
			head.Header[textproto.CanonicalMIMEHeaderKey(k)] = v
		}
	}
	body := resp.Body
	if err == nil && wire.Project != nil && resp.Status/100 == 2 {
		// As the host does: the plugin under test reads records, not the body.
		if body, err = projection.HostProjectLimited(body, *wire.Project, projection.Limits{}); err != nil {
			return HTTPResponse{}, err
		}
		head.Projected = true
	}
	rawHead, _ := json.Marshal(head)
	return decodeHTTPResponse(req, hostabi.AppendFrame(nil, rawHead, body))
}

func decodeHTTPRequest(frame []byte) (HTTPRequest, error) {
	rawHead, body, err := hostabi.SplitFrame(frame)
	if err != nil {
		return HTTPRequest{}, err
	}
	var h hostabi.HTTPRequestHead
	if err := json.Unmarshal(rawHead, &h); err != nil {
		return HTTPRequest{}, fmt.Errorf("guest.HTTP: encode request: %w", err)
	}
	if len(body) == 0 {
		body = nil
	}
	req := HTTPRequest{Service: h.Service, Method: h.Method, Path: h.Path, Header: h.Header, Body: body}
	if h.Project != nil {
		p, err := projection.FromSpec(*h.Project)
		if err != nil {
			return HTTPRequest{}, fmt.Errorf("guest.HTTP: %w", err)
		}
		req.Project = &p
	}
	return req, nil
}
