package guest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Transport is an http.RoundTripper over the host's HTTP capability, so
// that any Go client library (a SOAP client, a generated REST client) runs
// in a plugin unchanged: give it a URL whose host is the granted service's
// name and this transport.
//
//	u, _ := url.Parse("http://vcenter/sdk") // "vcenter" as granted in [plugin.services]
//	hc := &http.Client{Transport: guest.Transport{}}
//
// The request's URL host names the service (or Service does, when set);
// its path and query are relative to the service's endpoint; its scheme
// is ignored (the operator's grant decides http or https). Everything the
// host does to HTTP (hostabi/ABI.md §6) applies: no credential or cookie
// from the plugin reaches the service, none from the service reaches the
// plugin, redirects come back as 3xx, bodies are capped. Repeated request
// headers are joined with ", " (cookies: "; "). The request's context
// cannot interrupt a call in flight: the call's deadline bounds it.
type Transport struct {
	// Service, if set, is the service for every request, whatever the
	// URL's host.
	Service string
}

// RoundTrip performs req through the host.
func (t Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("guest.Transport: read request body: %w", err)
		}
		body = b
	}
	service := t.Service
	if service == "" {
		service = req.URL.Hostname()
	}
	hr := HTTPRequest{Service: service, Method: req.Method, Path: req.URL.RequestURI(), Body: body}
	if len(req.Header) > 0 {
		hr.Header = make(map[string]string, len(req.Header))
		for k, vs := range req.Header {
			sep := ", "
			if k == "Cookie" {
				sep = "; "
			}
			hr.Header[k] = strings.Join(vs, sep)
		}
	}
	resp, err := HTTP(hr)
	if err != nil {
		return nil, err
	}
	h := make(http.Header, len(resp.Header))
	for k, v := range resp.Header {
		h.Set(k, v)
	}
	return &http.Response{
		Status:     strconv.Itoa(resp.Status) + " " + http.StatusText(resp.Status),
		StatusCode: resp.Status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(resp.Body)), ContentLength: int64(len(resp.Body)),
		Request: req,
	}, nil
}
