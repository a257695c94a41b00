package guest_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
)

type plugin struct{}

func (plugin) Configure(cfg []byte) (string, error) {
	if string(cfg) == "bad" {
		return "", errors.New("bad config")
	}
	return "p", nil
}
func (plugin) ListNodes(req hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	if len(req.Shards) > 0 {
		return nil, errors.New("no shards here")
	}
	return []hostabi.Node{{UUID: "u1"}}, nil
}
func (plugin) ListInstances() ([]hostabi.Instance, error) { return nil, nil }

type checker struct{ plugin }

func (checker) ConfirmDeleted(uuids []string) ([]string, []string, error) { return uuids[:1], nil, nil }
func (checker) Describe() (string, string)                                { return "checker", "2.0" }

type user struct {
	plugin
	services []hostabi.Service
}

func (u user) Services() []hostabi.Service { return u.services }

func TestHandleEncodesAnswersAndErrorsInBand(t *testing.T) {
	cases := []struct {
		p               guest.Plugin
		export, in, out string
	}{
		{plugin{}, hostabi.ExportConfigure, "{}", `{"name":"p"}`},
		{plugin{}, hostabi.ExportConfigure, "bad", `{"error":"bad config"}`},
		{plugin{}, hostabi.ExportListNodes, "{}", `{"nodes":[{"uuid":"u1"}],"complete":true}`},
		{plugin{}, hostabi.ExportListNodes, `{"shards":["a"]}`, `{"error":"no shards here","nodes":null,"complete":false}`},
		{plugin{}, hostabi.ExportListNodes, `{`, `decode list_nodes request`},
		{plugin{}, hostabi.ExportConfirmDeleted, `{"uuids":["a"]}`, `rpengine_confirm_deleted is not implemented`},
		{checker{}, hostabi.ExportConfirmDeleted, `{"uuids":["a","b"]}`, `{"deleted":["a"],"present":[]}`},
		{checker{}, hostabi.ExportDescribe, `{}`, `{"name":"checker","version":"2.0","operations":["rpengine_confirm_deleted"],"services":null}`},
		{user{services: []hostabi.Service{{Name: "baremetal", Type: "baremetal"}, {Name: "world"}}}, hostabi.ExportDescribe, `{}`,
			`"services":[{"name":"baremetal","type":"baremetal"},{"name":"world"}]}`},
		{user{}, hostabi.ExportDescribe, `{}`, `"services":[]}`}, // declares none: not the same as null
		{plugin{}, "rpengine_nothing", `{}`, `{"error":"unknown operation rpengine_nothing"}`},
		{nil, hostabi.ExportListNodes, `{}`, `{"error":"plugin did not call guest.Run"}`},
	}
	for _, c := range cases {
		got := string(guest.Handle(c.p, c.export, []byte(c.in)))
		if got != c.out && !strings.Contains(got, c.out) {
			t.Errorf("%T %s %s: got %s, want %s", c.p, c.export, c.in, got, c.out)
		}
	}
	// Without a Describer the name comes from the build.
	var d hostabi.DescribeResponse
	json.Unmarshal(guest.Handle(plugin{}, hostabi.ExportDescribe, nil), &d)
	if d.Name == "" || len(d.Operations) != 0 {
		t.Errorf("describe %+v", d)
	}
}

func TestNativeHTTPGoesThroughTheTestTransportAndTheFrames(t *testing.T) {
	if _, err := guest.HTTP(guest.HTTPRequest{Service: "x", Path: "/"}); err == nil ||
		!strings.Contains(err.Error(), "SetHTTPForTest") {
		t.Fatalf("without a transport: %v", err)
	}
	var seen guest.HTTPRequest
	guest.SetHTTPForTest(func(r guest.HTTPRequest) (guest.HTTPResponse, error) {
		seen = r
		if r.Service == "down" {
			return guest.HTTPResponse{}, errors.New("connection refused")
		}
		return guest.HTTPResponse{Status: 404, Header: map[string]string{"x-request-id": "r"}, Body: []byte("nope")}, nil
	})
	defer guest.SetHTTPForTest(nil)
	resp, err := guest.HTTP(guest.HTTPRequest{Service: "baremetal", Path: "/v1/nodes/x", Header: map[string]string{"A": "b"}})
	if err != nil || resp.Status != 404 || string(resp.Body) != "nope" || resp.Header["X-Request-Id"] != "r" {
		t.Fatalf("resp %+v, err %v", resp, err)
	}
	if seen.Method != "GET" || seen.Header["A"] != "b" || seen.Body != nil {
		t.Fatalf("the transport saw %+v", seen)
	}
	if _, err := guest.HTTP(guest.HTTPRequest{Service: "down", Method: "POST", Path: "/x"}); err == nil ||
		err.Error() != "POST down /x: connection refused" {
		t.Fatalf("err = %v", err)
	}
}
