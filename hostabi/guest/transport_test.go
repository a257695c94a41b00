package guest

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestTransportMapsHostToServiceAndBack(t *testing.T) {
	var got HTTPRequest
	SetHTTPForTest(func(r HTTPRequest) (HTTPResponse, error) {
		got = r
		return HTTPResponse{Status: 201, Header: map[string]string{"content-type": "text/xml"}, Body: []byte("<ok/>")}, nil
	})
	defer SetHTTPForTest(nil)
	hc := &http.Client{Transport: Transport{}}
	req, _ := http.NewRequest("POST", "https://vcenter/sdk?x=1", strings.NewReader("<soap/>"))
	req.Header.Add("SOAPAction", "urn:vim25/8.0")
	req.Header.Add("Cookie", "a=1")
	req.Header.Add("Cookie", "b=2")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if got.Service != "vcenter" || got.Method != "POST" || got.Path != "/sdk?x=1" || string(got.Body) != "<soap/>" ||
		got.Header["Soapaction"] != "urn:vim25/8.0" || got.Header["Cookie"] != "a=1; b=2" {
		t.Fatalf("request %+v", got)
	}
	if resp.StatusCode != 201 || resp.Status != "201 Created" || resp.Header.Get("Content-Type") != "text/xml" || string(b) != "<ok/>" {
		t.Fatalf("response %d %q %v %q", resp.StatusCode, resp.Status, resp.Header, b)
	}
	if _, err := (Transport{Service: "other"}).RoundTrip(req.Clone(req.Context())); err != nil || got.Service != "other" {
		t.Fatalf("Service override: %v %q", err, got.Service)
	}
	SetHTTPForTest(func(HTTPRequest) (HTTPResponse, error) { return HTTPResponse{}, io.ErrUnexpectedEOF })
	if _, err := hc.Get("http://vcenter/x"); err == nil {
		t.Fatal("a host error did not reach the client")
	}
}
