package ironic

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/hostabi/guest"
	"github.com/rpengine/rpengine/plugins/ironic/internal/fakeironic"
)

// httpTransport does what the host does for guest.HTTP: resolve the
// service, send the request, return status, canonical headers and body.
func httpTransport(services map[string]string) Transport {
	return func(req guest.HTTPRequest) (guest.HTTPResponse, error) {
		base, ok := services[req.Service]
		if !ok {
			return guest.HTTPResponse{}, errors.New("service " + req.Service + " is not granted")
		}
		hreq, err := http.NewRequest(req.Method, base+req.Path, bytes.NewReader(req.Body))
		if err != nil {
			return guest.HTTPResponse{}, err
		}
		for k, v := range req.Header {
			hreq.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(hreq)
		if err != nil {
			return guest.HTTPResponse{}, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return guest.HTTPResponse{}, err
		}
		h := map[string]string{}
		for k, v := range resp.Header {
			h[k] = strings.Join(v, ", ")
		}
		return guest.HTTPResponse{Status: resp.StatusCode, Header: h, Body: body}, nil
	}
}

// start serves fake at a test server and returns a client for it.
func start(t testing.TB, fake http.Handler, cfg Config, compute http.Handler) *Client {
	t.Helper()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	services := map[string]string{serviceBaremetal: srv.URL}
	if compute != nil {
		c := httptest.NewServer(compute)
		t.Cleanup(c.Close)
		services[serviceCompute] = c.URL
	}
	if cfg.PageSize == 0 {
		cfg.PageSize = defaultPageSize
	}
	return New(cfg, httpTransport(services))
}

// listRequests returns the node listing requests among reqs.
func listRequests(reqs []string) []string {
	var out []string
	for _, r := range reqs {
		if strings.HasPrefix(r, "/v1/nodes?") {
			out = append(out, r)
		}
	}
	return out
}

func uuids(ns []fakeironic.Node) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.UUID
	}
	return out
}

type (
	guestRequest  = guest.HTTPRequest
	guestResponse = guest.HTTPResponse
)
