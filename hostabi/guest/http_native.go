//go:build !wasip1

package guest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/textproto"
	"sync"

	"github.com/rpengine/rpengine/hostabi"
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
	wire, err := decodeHTTPRequest(encodeHTTPRequest(req))
	if err != nil {
		return HTTPResponse{}, err
	}
	resp, err := fn(wire)
	head := hostabi.HTTPResponseHead{Status: resp.Status}
	if err != nil {
		head = hostabi.HTTPResponseHead{Error: err.Error()}
	} else if len(resp.Header) > 0 {
		head.Header = make(map[string]string, len(resp.Header))
		for k, v := range resp.Header {
			head.Header[textproto.CanonicalMIMEHeaderKey(k)] = v
		}
	}
	rawHead, _ := json.Marshal(head)
	return decodeHTTPResponse(req, hostabi.AppendFrame(nil, rawHead, resp.Body))
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
	return HTTPRequest{Service: h.Service, Method: h.Method, Path: h.Path, Header: h.Header, Body: body}, nil
}
