package wasmhost

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
)

// A transport failure reaches the plugin naming the service and what
// went wrong, never where the service is (ABI §6).
func TestGateErrorsNameNoAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	defer tlsSrv.Close()
	g := testGate(t, map[string]string{
		"baremetal": "http://" + closed,
		"dns":       "http://rpengine-no-such-host.invalid:6385",
		"tls":       tlsSrv.URL,
		"creds":     "http://user:s3cret@" + closed,
	})
	for _, c := range []struct{ service, want string }{
		{"baremetal", "dial: connect: connection refused"},
		{"dns", "name lookup failed"},
		{"tls", "certificate"},
		{"creds", "connection refused"},
	} {
		head, _ := json.Marshal(hostabi.HTTPRequestHead{Service: c.service, Method: "GET", Path: "/v1/nodes"})
		out := g.do(context.Background(), hostabi.AppendFrame(nil, head, nil))
		rawHead, _, err := hostabi.SplitFrame(out)
		if err != nil {
			t.Fatal(err)
		}
		var got hostabi.HTTPResponseHead
		json.Unmarshal(rawHead, &got)
		host, port, _ := net.SplitHostPort(strings.TrimPrefix(g.services[c.service].Host, "user:s3cret@"))
		for _, leak := range []string{host, port, "s3cret", "rpengine-no-such-host"} {
			if leak != "" && strings.Contains(got.Error, leak) {
				t.Errorf("%s: the plugin sees %q in %q", c.service, leak, got.Error)
			}
		}
		if !strings.Contains(got.Error, c.want) {
			t.Errorf("%s: %q lacks %q", c.service, got.Error, c.want)
		}
	}
}
