package wasmhost

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
)

// tokenCredential is a Keystone-like credential for the tests: a token
// that the fake service may revoke, renewed by issuing the next one.
type tokenCredential struct {
	mu      sync.Mutex
	token   string
	n       int
	renews  int
	failNew bool
}

func (c *tokenCredential) Apply(_ context.Context, r *http.Request) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	r.Header.Set("X-Auth-Token", c.token)
	return nil
}

func (c *tokenCredential) Rejected(status int, _ http.Header, _ []byte) bool { return status == 401 }

func (c *tokenCredential) Renew(_ context.Context, r *http.Request) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.renews++
	if c.failNew {
		return errors.New("keystone down")
	}
	if r.Header.Get("X-Auth-Token") == c.token {
		c.n++
		c.token = "tok" + string(rune('0'+c.n))
	}
	return nil
}

// gateCall performs one guest request and decodes the response frame.
func gateCall(t *testing.T, g *gate, h hostabi.HTTPRequestHead, body string) (hostabi.HTTPResponseHead, string) {
	t.Helper()
	raw, _ := json.Marshal(h)
	rawHead, rb, err := hostabi.SplitFrame(g.do(context.Background(), hostabi.AppendFrame(nil, raw, []byte(body))))
	if err != nil {
		t.Fatal(err)
	}
	var out hostabi.HTTPResponseHead
	if err := json.Unmarshal(rawHead, &out); err != nil {
		t.Fatal(err)
	}
	return out, string(rb)
}

func TestGateRenewsARejectedCredentialAndRetriesOnce(t *testing.T) {
	var mu sync.Mutex
	valid := "tok1"
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		b := make([]byte, 3)
		n, _ := r.Body.Read(b)
		seen = append(seen, r.Header.Get("X-Auth-Token")+":"+string(b[:n]))
		if r.Header.Get("X-Auth-Token") != valid {
			w.WriteHeader(401)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	cred := &tokenCredential{token: "tok0"}
	g, err := newGate(Options{Services: map[string]string{"svc": srv.URL}, Credentials: map[string]Credential{"svc": cred}}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	h := hostabi.HTTPRequestHead{Service: "svc", Method: "POST", Path: "/x", Header: map[string]string{"X-Auth-Token": "plugin's own"}}
	head, body := gateCall(t, g, h, "abc")
	if head.Status != 200 || body != "ok" {
		t.Fatalf("after a revoked token: %+v %q", head, body)
	}
	if want := []string{"tok0:abc", "tok1:abc"}; strings.Join(seen, ",") != strings.Join(want, ",") {
		t.Fatalf("requests %v, want %v (the plugin's token dropped, the body sent again)", seen, want)
	}
	// A credential the service keeps refusing: one renewal, one retry,
	// then the plugin gets the 401.
	mu.Lock()
	valid, seen = "never", nil
	mu.Unlock()
	if head, _ := gateCall(t, g, h, ""); head.Status != 401 || len(seen) != 2 || cred.renews != 2 {
		t.Fatalf("refused twice: %+v after %d requests, %d renewals", head, len(seen), cred.renews)
	}
	// Renewal failing: the plugin gets the service's refusal, not a retry.
	cred.failNew, seen = true, nil
	if head, _ := gateCall(t, g, h, ""); head.Status != 401 || len(seen) != 1 {
		t.Fatalf("renewal failed: %+v after %d requests", head, len(seen))
	}
}

func TestGateHidesSessionHeadersFromThePlugin(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, k := range sessionHeaders {
			w.Header().Add(k, "secret-"+k)
		}
		w.Header().Add("Set-Cookie", "vmware_soap_session=abc")
		w.Header().Set("X-Openstack-Request-Id", "req-1")
		w.WriteHeader(201)
	}))
	defer srv.Close()
	g := testGate(t, map[string]string{"svc": srv.URL})
	head, _ := gateCall(t, g, hostabi.HTTPRequestHead{Service: "svc", Method: "POST", Path: "/v3/auth/tokens"}, "")
	if head.Status != 201 || head.Header["X-Openstack-Request-Id"] != "req-1" {
		t.Fatalf("ordinary header lost: %+v", head)
	}
	for k, v := range head.Header {
		if strings.Contains(v, "secret") || strings.Contains(v, "abc") {
			t.Errorf("plugin received %s: %s", k, v)
		}
	}
}

func TestGateCredentialPerServiceAndOptOut(t *testing.T) {
	var got sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.URL.Path, r.Header.Get("X-Auth-Token"))
	}))
	defer srv.Close()
	g, err := newGate(Options{
		Services:    map[string]string{"a": srv.URL + "/a", "b": srv.URL + "/b"},
		Credentials: map[string]Credential{"b": nil}, // opted out
		AuthHeader:  func(string) (string, string) { return "X-Auth-Token", "kt" },
	}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	gateCall(t, g, hostabi.HTTPRequestHead{Service: "a", Method: "GET", Path: "/"}, "")
	gateCall(t, g, hostabi.HTTPRequestHead{Service: "b", Method: "GET", Path: "/", Header: map[string]string{"X-Auth-Token": "mine"}}, "")
	if a, _ := got.Load("/a/"); a != "kt" {
		t.Errorf("service a got token %v, want the host's", a)
	}
	if b, _ := got.Load("/b/"); b != "" {
		t.Errorf("opted-out service b got token %v, want none", b)
	}
	if _, err := newGate(Options{Services: map[string]string{"a": srv.URL}, Credentials: map[string]Credential{"z": &tokenCredential{}}}.withDefaults()); err == nil {
		t.Error("a credential for an ungranted service was accepted")
	}
}
