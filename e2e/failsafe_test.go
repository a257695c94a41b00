package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/ironictest"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// Placement never offers a node the engine cannot vouch for.

// worldConfig is an engine config whose fake plugin reads its nodes from
// world on every call.
func worldConfig(t *testing.T, id, placementURL, worldURL, extra string) string {
	t.Helper()
	return writeConfig(t, id, placementURL, plugintest.Build(t, "plugins/fake"),
		fmt.Sprintf("[plugin.services]\nworld = %q\n[plugin.config]\nworld = \"world\"\n%s", worldURL, extra))
}

// freeIn is a schedulable node of class rc.
func freeIn(uuid, rc string) hostabi.Node {
	return hostabi.Node{UUID: uuid, ResourceClass: rc, PowerState: "power on", ProvisionState: "available"}
}

// candidates lists the providers GET /allocation_candidates offers for one
// unit of rc, as the scheduler asks.
func candidates(t *testing.T, placementURL, rc string) []string {
	t.Helper()
	var out struct {
		Summaries map[string]any `json:"provider_summaries"`
	}
	if code := placementGet(t, placementURL, "/allocation_candidates?resources="+rc+":1", &out); code != 200 {
		t.Fatalf("allocation_candidates: %d", code)
	}
	var ids []string
	for id := range out.Summaries {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// A 300-byte class and a 256-byte trait beside ordinary nodes quarantine
// their node alone (case 1); the others are written.
func TestFailSafeOverLongValuesQuarantineTheirNodeAlone(t *testing.T) {
	url := placementtest.Shared(t)
	u := func(i int) string { return uuidFor(t.Name(), i) }
	var nodes []hostabi.Node
	for i := range 9 {
		nodes = append(nodes, freeIn(u(i), "failsafe-long"))
	}
	longClass, longTrait := freeIn(u(9), strings.Repeat("G", 300)), freeIn(u(10), "failsafe-long")
	longTrait.Traits = []string{"CUSTOM_" + strings.Repeat("T", 249)} // 256 bytes
	world := &crashRig{}
	world.set(append(nodes, longClass, longTrait))
	srv := httptest.NewServer(world)
	defer srv.Close()
	cfg := worldConfig(t, fmt.Sprintf("long-%x", os.Getpid()), url, srv.URL, "")
	r, res := ironicOnce(t, cfg)
	t.Logf("report: nodes %d created %d quarantined %d errors %v", r.Nodes, r.Created+r.Unchanged, r.Quarantined, r.ErrorMessages())
	if r.Nodes != 11 || r.Created+r.Unchanged != 9 || r.Quarantined != 2 || res.code == 0 {
		t.Fatalf("exit %d: %+v", res.code, r)
	}
	for i := range 9 {
		if _, ok := readProvider(t, url, u(i)); !ok {
			t.Errorf("ordinary node %d has no provider", i)
		}
	}
	for _, n := range []string{u(9), u(10)} {
		if _, ok := readProvider(t, url, n); ok {
			t.Errorf("over-long node %s has a provider", n)
		}
		if !slices.ContainsFunc(r.Errors, func(e engine.Error) bool {
			return e.Node == n && strings.Contains(e.Message, "255 (plugin.max_field_length)")
		}) {
			t.Errorf("no error names node %s: %v", n, r.ErrorMessages())
		}
	}
}

// A node with 120 bytes that the plugin's JSON writes escaped (Go's
// encoding/json writes < as \u003c: 720 bytes on the wire) is written:
// the limit counts the decoded value, as rpb1 does.
func TestFailSafeEscapedBytesCountDecoded(t *testing.T) {
	url := placementtest.Shared(t)
	u := func(i int) string { return uuidFor(t.Name(), i) }
	escaped := freeIn(u(0), "failsafe-escaped")
	escaped.Name = strings.Repeat("<&>", 40)
	raw, _ := json.Marshal(map[string]any{"node": []hostabi.Node{escaped, freeIn(u(1), "failsafe-escaped")}})
	p, err := wasmhost.Load(context.Background(), plugintest.Build(t, "plugins/fake"), raw,
		wasmhost.Options{CacheDir: plugintest.CacheDir(), JSONAnswers: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	pc, err := placement.New(context.Background(), placement.Config{Endpoint: url, Token: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(p, pc, engine.Policy{OwnerTrait: engine.OwnerTrait(fmt.Sprintf("esc-%x", os.Getpid()))}, engine.Options{}, nil, nil)
	r := eng.Cycle(context.Background())
	t.Logf("report: nodes %d created %d errors %v", r.Nodes, r.Created, r.ErrorMessages())
	if len(r.Errors) > 0 || r.Created+r.Unchanged != 2 {
		t.Fatalf("%+v", r.Errors)
	}
	if _, ok := readProvider(t, url, u(0)); !ok {
		t.Fatal("the node with escaped bytes has no provider")
	}
}

// A quarantined node's provider is not a candidate in the cycle that
// quarantined it, and is again once its data is good (case 2).
func TestFailSafeQuarantinedProviderIsNoCandidate(t *testing.T) {
	url := placementtest.Shared(t)
	rc := fmt.Sprintf("failsafe-q-%x", os.Getpid())
	class := "CUSTOM_" + strings.ToUpper(strings.ReplaceAll(rc, "-", "_"))
	u := func(i int) string { return uuidFor(t.Name(), i) }
	good := []hostabi.Node{freeIn(u(0), rc), freeIn(u(1), rc)}
	world := &crashRig{}
	world.set(good)
	srv := httptest.NewServer(world)
	defer srv.Close()
	cfg := worldConfig(t, fmt.Sprintf("quar-%x", os.Getpid()), url, srv.URL, "")
	once(t, cfg)
	if got := candidates(t, url, class); !slices.Equal(got, []string{u(0), u(1)}) {
		t.Fatalf("candidates before: %v", got)
	}
	bad := slices.Clone(good)
	bad[1].ResourceClass = "" // its class removed in the source
	world.set(bad)
	r, _ := ironicOnce(t, cfg)
	got := candidates(t, url, class)
	t.Logf("quarantine cycle: quarantined %d, candidates %v", r.Quarantined, got)
	if r.Quarantined != 1 || !slices.Equal(got, []string{u(0)}) {
		t.Fatalf("after the quarantine: %+v, candidates %v", r, got)
	}
	world.set(good)
	once(t, cfg)
	if got := candidates(t, url, class); !slices.Equal(got, []string{u(0), u(1)}) {
		t.Fatalf("candidates once the data is good: %v", got)
	}
}

// A node deleted in the real Ironic is no candidate after the first proof
// of its deletion, and its provider is deleted at the second (case 3).
func TestFailSafeNodeDeletedInIronicIsNoCandidate(t *testing.T) {
	placementURL := placementtest.Shared(t)
	ironicURL := ironictest.StartReal(t)
	plugin := plugintest.Build(t, "plugins/ironic")
	c := ironictest.NewClient(t, ironicURL)
	rc := fmt.Sprintf("failsafe-gone-%x", os.Getpid())
	class := "CUSTOM_" + strings.ToUpper(strings.ReplaceAll(rc, "-", "_"))
	stays := c.Create(t, ironictest.Spec{Name: "stays", ResourceClass: rc})
	c.Available(t, stays)
	goes := c.Create(t, ironictest.Spec{Name: "goes", ResourceClass: rc})
	c.Available(t, goes)
	cfg := ironicConfig(t, fmt.Sprintf("gone-%x", os.Getpid()), placementURL, plugin, ironicURL, "", "")
	once(t, cfg)
	want := []string{stays, goes}
	slices.Sort(want)
	if got := candidates(t, placementURL, class); !slices.Equal(got, want) {
		t.Fatalf("candidates before: %v, want %v", got, want)
	}
	c.Delete(t, goes)
	once(t, cfg)
	got := candidates(t, placementURL, class)
	p, exists := readProvider(t, placementURL, goes)
	t.Logf("first proof: candidates %v, provider kept %v, inventory %+v", got, exists, p.Inventories)
	if !slices.Equal(got, []string{stays}) || !exists {
		t.Fatalf("after the first proof: candidates %v, provider exists %v", got, exists)
	}
	once(t, cfg)
	if _, exists := readProvider(t, placementURL, goes); exists {
		t.Fatal("the provider outlived the second proof")
	}
}

// Placement killed during a cold start: /healthz is 503 within one
// interval, and the log names the refused connection (case 4).
func TestFailSafePlacementKilledDuringAColdStart(t *testing.T) {
	url := placementtest.StartReal(t)
	front := newDoor(t, url)
	world := &crashRig{}
	var nodes []hostabi.Node
	for i := range 500 {
		nodes = append(nodes, freeIn(uuidFor(t.Name(), i), "failsafe-cold"))
	}
	world.set(nodes)
	srv := httptest.NewServer(world)
	defer srv.Close()
	listen := freeAddr(t)
	cfg := worldConfig(t, fmt.Sprintf("cold-%x", os.Getpid()), front.url(), srv.URL, fmt.Sprintf("[server]\nlisten = %q\n", listen))
	_, logs := startDaemon(t, cfg)
	deadline := time.Now().Add(60 * time.Second)
	for front.count() < 150 && time.Now().Before(deadline) { // mid cold start
		time.Sleep(20 * time.Millisecond)
	}
	front.close() // connections now refused
	killed := time.Now()
	const interval = 5 * time.Second // writeConfig's
	var code int
	var body string
	for time.Since(killed) < 2*interval {
		code, body = get(t, "http://"+listen+"/healthz")
		if code == 503 {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	took := time.Since(killed)
	time.Sleep(interval + time.Second) // one interval's log
	t.Logf("healthz %d after %s: %s", code, took.Round(100*time.Millisecond), body)
	var lines []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "connection refused") {
			lines = append(lines, tail(l, 160))
		}
	}
	refused := len(lines)
	t.Logf("log lines naming the refused connection in %s: %d\n%s", time.Since(killed).Round(time.Second), refused, strings.Join(lines, "\n"))
	if refused > 6 { // once per interval, not once per request
		t.Errorf("%d log lines about the refused connection in two intervals", refused)
	}
	if code != 503 || took > interval {
		t.Fatalf("healthz %d %s after %s, want 503 within %s", code, body, took, interval)
	}
	if refused == 0 {
		t.Fatalf("the log never names the refused connection:\n%s", tail(logs.String(), 3000))
	}
}

// door passes requests to Placement until closed; then its port refuses
// connections, as a killed Placement's does.
type door struct {
	srv *httptest.Server
	mu  sync.Mutex
	n   int
}

func newDoor(t *testing.T, target string) *door {
	d := &door{}
	d.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		d.n++
		d.mu.Unlock()
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, target+r.URL.RequestURI(), r.Body)
		req.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(d.close)
	return d
}

func (d *door) url() string { return d.srv.URL }

func (d *door) count() int { d.mu.Lock(); defer d.mu.Unlock(); return d.n }

func (d *door) close() {
	d.srv.Listener.Close()
	d.srv.CloseClientConnections()
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func get(t *testing.T, url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
