package faultproxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

func TestProxyFailsTheConfiguredFractionAndForwardsTheRest(t *testing.T) {
	var served atomic.Int64
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		io.WriteString(w, "ok "+r.URL.Path)
	}))
	defer backend.Close()
	p, err := New(backend.URL, Faults{BadGateway: 0.2, AfterForward: 0.5, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ok, bad := 0, 0
	for range 1000 {
		resp, err := http.Get(p.URL() + "/x")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode == 200 && string(b) == "ok /x":
			ok++
		case resp.StatusCode == 502 && string(b) == badGatewayBody:
			bad++
		default:
			t.Fatalf("unexpected answer %d %q", resp.StatusCode, b)
		}
	}
	total, injected := p.Requests()
	if total != 1000 || injected != bad || bad < 150 || bad > 250 {
		t.Fatalf("total %d, injected %d, 502s %d: want about 200 of 1000", total, injected, bad)
	}
	// Half the 502s were forwarded first: the backend saw them.
	if s := int(served.Load()); s <= ok || s >= ok+bad {
		t.Fatalf("backend served %d with %d ok and %d failed: want some failed requests forwarded", s, ok, bad)
	}
	if p.ByPath()["/x"] != 1000 {
		t.Fatalf("by path: %v", p.ByPath())
	}
}
