package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
	"github.com/rpengine/rpengine/internal/testing/guesttest"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

func newHostile() guest.Plugin { return &hostile{} }

// fetch runs one HTTP request from the plugin and returns the echo node.
func fetch(t *testing.T, load guesttest.Loader, cfg map[string]any) (hostabi.Node, error) {
	t.Helper()
	cfg["attack"] = "fetch"
	p := load.OK(t, cfg)
	nodes, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{})
	if err != nil {
		return hostabi.Node{}, err
	}
	if len(nodes) != 1 {
		t.Fatalf("got %d nodes, want the echo node", len(nodes))
	}
	return nodes[0], nil
}

func TestHTTPReachesAGrantedServiceWithTheHostsCredentials(t *testing.T) {
	type seen struct {
		method, uri, token, version, body string
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.RequestURI, r.Header.Get("X-Auth-Token"), r.Header.Get("X-OpenStack-Ironic-API-Version"), string(b)}
		w.Header().Set("X-Openstack-Request-Id", "req-1")
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `{"nodes":[]}`)
	}))
	defer srv.Close()
	opts := wasmhost.Options{
		Services: map[string]string{"baremetal": srv.URL + "/baremetal"},
		AuthHeader: func(service string) (string, string) {
			return "X-Auth-Token", "token-for-" + service
		},
	}
	guesttest.Run(t, ".", newHostile, opts, func(t *testing.T, load guesttest.Loader) {
		n, err := fetch(t, load, map[string]any{
			"service": "baremetal", "method": "POST", "path": "/v1/nodes?limit=1000", "body": "hello",
			// The plugin's own credential headers never reach the wire.
			"header": map[string]string{"X-OpenStack-Ironic-API-Version": "1.82", "X-Auth-Token": "forged"},
		})
		if err != nil {
			t.Fatal(err)
		}
		s := <-got
		want := seen{"POST", "/baremetal/v1/nodes?limit=1000", "token-for-baremetal", "1.82", "hello"}
		if s != want {
			t.Errorf("server saw %+v, want %+v", s, want)
		}
		if n.Name != "202" || n.Fault != `{"nodes":[]}` {
			t.Errorf("plugin saw status %s body %q", n.Name, n.Fault)
		}
		if !strings.Contains(strings.Join(n.Traits, " "), "X-Openstack-Request-Id=req-1") {
			t.Errorf("plugin saw headers %v", n.Traits)
		}
	})
}

func TestHTTPRefusals(t *testing.T) {
	big := strings.Repeat("x", 2048)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			io.WriteString(w, big)
		case "/redirect":
			http.Redirect(w, r, "http://127.0.0.1:1/elsewhere", http.StatusFound)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	opts := wasmhost.Options{
		Services:        map[string]string{"baremetal": srv.URL, "compute": srv.URL + "/compute"},
		MaxHTTPResponse: 1024,
	}
	cases := []struct {
		name, service, path string
		want                string // in the error; "" = no error
		status              string // else, the status the plugin sees
	}{
		{"ungranted service", "identity", "/v3/auth/tokens", `service "identity" is not granted (granted in [plugin.services]: baremetal, compute)`, ""},
		{"path without slash", "baremetal", "v1/nodes", `path "v1/nodes" must start with /`, ""},
		{"path escaping the endpoint", "compute", "/../baremetal/v1", "leaves the compute endpoint", ""},
		{"body over the cap", "baremetal", "/big", "response body exceeds the 1024-byte cap", ""},
		{"redirect not followed", "baremetal", "/redirect", "", "302"},
		{"HTTP error is an answer", "baremetal", "/v1/nodes/gone", "", "404"},
	}
	guesttest.Run(t, ".", newHostile, opts, func(t *testing.T, load guesttest.Loader) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				n, err := fetch(t, load, map[string]any{"service": c.service, "path": c.path})
				switch {
				case c.want == "" && err != nil:
					t.Fatalf("unexpected error: %v", err)
				case c.want == "" && n.Name != c.status:
					t.Fatalf("status %s, want %s", n.Name, c.status)
				case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
					t.Fatalf("err = %v, want it to contain %q", err, c.want)
				case c.want != "" && !strings.HasPrefix(err.Error(), "plugin hostile: list_nodes: "):
					t.Fatalf("err = %v, want it to name the plugin and the operation", err)
				}
			})
		}
	})
}

// A request the service never answers ends at the call's time limit, and
// the plugin is usable again afterwards.
func TestHTTPHonoursTheCallDeadline(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fast" {
			return
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	// Long enough for the next call to start a fresh instance on a loaded
	// machine; the slow request waits for the limit whatever it is.
	opts := wasmhost.Options{Services: map[string]string{"baremetal": srv.URL}, CallTimeout: time.Second}
	wasm := guesttest.Build(t, ".")
	p := guesttest.WasmLoader(wasm, opts).OK(t, map[string]any{"attack": "fetch", "service": "baremetal", "path": "/slow"})
	_, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{})
	if !wasmhost.IsKind(err, wasmhost.KindTimeout) || !strings.Contains(err.Error(), "time limit of 1s") {
		t.Fatalf("err = %v, want a timeout naming the limit", err)
	}
	if _, err := p.ListInstances(context.Background()); err != nil {
		t.Fatalf("the next call: %v", err)
	}
}
