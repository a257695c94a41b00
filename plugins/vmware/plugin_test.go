package main

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/rpengine/rpengine/internal/testing/guesttest"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
	"github.com/rpengine/rpengine/internal/testing/vcsimtest"
	"github.com/rpengine/rpengine/internal/vcsession"
	"github.com/rpengine/rpengine/internal/wasmhost"
	"github.com/rpengine/rpengine/plugins/vmware/vcenter"
)

// testConfig counts vcsim's local datastores (type OTHER).
var testConfig = map[string]any{"datastore_types": []string{"VMFS", "NFS", "NFS41", "vsan", "OTHER"},
	"cpu_allocation_ratio": 8.0, "ram_allocation_ratio": 1.5, "reserved_host_memory_mb": 1024, "reserved_host_disk_mb": 2048}

// recorder stands between the host and vcsim and keeps what the plugin's
// calls carried and what came back, headers and bodies.
type recorder struct {
	mu   sync.Mutex
	seen []string
	next http.Handler
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	rw := httptest.NewRecorder()
	r.next.ServeHTTP(rw, req)
	r.mu.Lock()
	r.seen = append(r.seen, req.Header.Get("Cookie"))
	r.mu.Unlock()
	for k, vs := range rw.Header() {
		w.Header()[k] = vs
	}
	w.WriteHeader(rw.Code)
	w.Write(rw.Body.Bytes())
}

// loadWasm loads the built plugin with the vCenter granted through a
// session the host holds.
func loadWasm(tb testing.TB, vcURL string, cfg map[string]any, opts wasmhost.Options) (*wasmhost.Plugin, *vcsession.Session) {
	tb.Helper()
	raw, _ := json.Marshal(cfg)
	s, err := vcsession.New(vcURL, vcsimtest.User, vcsimtest.Password, nil)
	if err != nil {
		tb.Fatal(err)
	}
	opts.CacheDir = plugintest.CacheDir()
	opts.Services = map[string]string{"vcenter": vcURL}
	opts.Credentials = map[string]wasmhost.Credential{"vcenter": s}
	p, err := wasmhost.Load(context.Background(), plugintest.Build(tb, "plugins/vmware"), raw, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Close(context.Background()); s.Close(context.Background()) })
	return p, s
}

// want computes each cluster's inventory from what the test reads of
// vcsim with its own govmomi calls (nova's arithmetic, written again).
func want(t *testing.T, sim *vcsimtest.Sim, vcUUID string) map[string]map[string]hostabi.Resource {
	ctx := context.Background()
	out := map[string]map[string]hostabi.Resource{}
	for _, cl := range vcsimtest.Clusters(ctx, t, sim.Client(ctx)) {
		var threads, maxT, mem, maxM, disk, maxD int64
		for _, h := range cl.Hosts {
			if h.Maintenance || !h.Connected {
				continue
			}
			threads += h.Threads
			maxT = max(maxT, h.Threads)
			mem += h.MemoryBytes >> 20
			maxM = max(maxM, h.MemoryBytes>>20)
		}
		for _, d := range cl.Datastores {
			disk += d.Capacity
			maxD = max(maxD, d.Capacity)
		}
		id, _ := vcenter.ClusterUUID(vcUUID, cl.Ref.Value)
		out[id] = map[string]hostabi.Resource{
			"VCPU":      {Total: threads, MinUnit: 1, MaxUnit: maxT, StepSize: 1, AllocationRatio: 8},
			"MEMORY_MB": {Total: mem, Reserved: 1024, MinUnit: 1, MaxUnit: maxM, StepSize: 1, AllocationRatio: 1.5},
			"DISK_GB":   {Total: disk >> 30, Reserved: 2, MinUnit: 1, MaxUnit: maxD >> 30, StepSize: 1, AllocationRatio: 1},
		}
	}
	return out
}

func TestWasmPluginListsClustersAndNeverSeesTheSession(t *testing.T) {
	sim := vcsimtest.Start(t, vcsimtest.Model{Clusters: 3, Hosts: 4, Datastores: 2})
	target, _ := url.Parse(sim.URL)
	rec := &recorder{next: httputil.NewSingleHostReverseProxy(target)}
	front := httptest.NewServer(rec)
	defer front.Close()

	p, sess := loadWasm(t, front.URL, testConfig, wasmhost.Options{})
	ctx := context.Background()
	nodes, err := p.ListNodes(ctx, hostabi.ListNodesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	about := sim.Client(ctx).ServiceContent.About
	exp := want(t, sim, about.InstanceUuid)
	if len(nodes) != 3 || len(exp) != 3 {
		t.Fatalf("%d nodes, %d clusters", len(nodes), len(exp))
	}
	for _, n := range nodes {
		w, ok := exp[n.UUID]
		if !ok {
			t.Fatalf("node %s (%s) is no cluster of vcsim", n.UUID, n.Name)
		}
		for rc, r := range w {
			if n.Resources[rc] != r {
				t.Errorf("cluster %s %s: got %+v, want %+v", n.Name, rc, n.Resources[rc], r)
			}
		}
		if ref, ok := vcenter.ClusterRef(about.InstanceUuid, n.UUID); !ok || !strings.HasPrefix(ref, "domain-c") {
			t.Errorf("uuid %s does not reverse: %q", n.UUID, ref)
		}
	}
	if sess.Logins() != 1 {
		t.Fatalf("%d logins", sess.Logins())
	}
	// The session cookie went to vCenter on the plugin's calls...
	rec.mu.Lock()
	withCookie := 0
	for _, c := range rec.seen {
		if strings.Contains(c, "vmware_soap_session=") {
			withCookie++
		}
	}
	rec.mu.Unlock()
	if withCookie == 0 {
		t.Fatal("no plugin call carried the session cookie")
	}
}

// seen records everything the plugin's code receives over HTTP.
type seen struct {
	mu  sync.Mutex
	all strings.Builder
	rt  http.RoundTripper
}

func (s *seen) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.rt.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(bytes.NewReader(b))
	s.mu.Lock()
	defer s.mu.Unlock()
	resp.Header.Write(&s.all)
	s.all.Write(b)
	return resp, nil
}

// The same plugin code, natively behind the same gate and session: what
// it receives (headers and bodies of every answer) holds neither the
// password nor the session cookie, and a service it was not granted is
// refused.
func TestPluginNeverReceivesPasswordOrSession(t *testing.T) {
	sim := vcsimtest.Start(t, vcsimtest.Model{Clusters: 2, Hosts: 2, Datastores: 1})
	sess, _ := vcsession.New(sim.URL, vcsimtest.User, vcsimtest.Password, nil)
	defer sess.Close(context.Background())
	rec := &seen{rt: guest.Transport{}}
	raw, _ := json.Marshal(testConfig)
	ctx := context.Background()
	p, err := guesttest.Native(ctx, &plugin{rt: rec}, raw, wasmhost.Options{
		Services: map[string]string{"vcenter": sim.URL}, Credentials: map[string]wasmhost.Credential{"vcenter": sess}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	nodes, err := p.ListNodes(ctx, hostabi.ListNodesRequest{})
	if err != nil || len(nodes) != 2 {
		t.Fatalf("%d nodes, %v", len(nodes), err)
	}
	// Restart: the session is re-established by the host, unseen.
	sim.Restart()
	if nodes, err = p.ListNodes(ctx, hostabi.ListNodesRequest{}); err != nil || len(nodes) != 2 || sess.Logins() != 2 {
		t.Fatalf("after a vcsim restart: %d nodes, %v, %d logins", len(nodes), err, sess.Logins())
	}
	got := rec.all.String()
	if !strings.Contains(got, "RetrievePropertiesExResponse") {
		t.Fatalf("the recorder saw no answer: %.300s", got)
	}
	for _, secret := range []string{vcsimtest.Password, "vmware_soap_session", "Set-Cookie"} {
		if strings.Contains(got, secret) {
			t.Errorf("the plugin received %q", secret)
		}
	}
	other, _ := json.Marshal(map[string]any{"service": "elsewhere"})
	p2, err := guesttest.Native(ctx, &plugin{}, other, wasmhost.Options{Services: map[string]string{"vcenter": sim.URL}})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close(ctx)
	if _, err := p2.ListNodes(ctx, hostabi.ListNodesRequest{}); err == nil || !strings.Contains(err.Error(), `service "elsewhere" is not granted`) {
		t.Fatalf("an ungranted service: %v", err)
	}
}
