package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/testing/ironictest"
	"github.com/rpengine/rpengine/internal/testing/novatest"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// writeCounter stands between one writer and Placement and records its
// writes (every request but GET), so each side's writes are counted apart.
type writeCounter struct {
	url    string
	mu     sync.Mutex
	writes []string // "METHOD path status"
}

func newWriteCounter(t *testing.T, placementURL string) *writeCounter {
	t.Helper()
	target, err := url.Parse(placementURL)
	if err != nil {
		t.Fatal(err)
	}
	w := &writeCounter{}
	rp := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			rp.ServeHTTP(rw, r)
			return
		}
		rec := &statusRecorder{ResponseWriter: rw, status: 200}
		rp.ServeHTTP(rec, r)
		w.mu.Lock()
		w.writes = append(w.writes, fmt.Sprintf("%s %s %d", r.Method, r.URL.Path, rec.status))
		w.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	w.url = srv.URL
	return w
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) { s.status = code; s.ResponseWriter.WriteHeader(code) }

// take returns the writes since the last take.
func (w *writeCounter) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.writes
	w.writes = nil
	return out
}

// refused counts the writes Placement answered with an error.
func refused(ws []string) int {
	n := 0
	for _, w := range ws {
		if code, _ := strconv.Atoi(w[strings.LastIndexByte(w, ' ')+1:]); code >= 400 {
			n++
		}
	}
	return n
}

// engineView stands between the engine's plugin and Ironic and sets, on
// chosen nodes, fields that nova's rules never read: retired on an
// available node, fault without maintenance, a pending
// target_provision_state. Ironic 21.4 will not hold a node in these
// states on request (retired is refused in available, fault is read-only
// and comes with maintenance, targets are transient), and nova reads the
// real Ironic, where these fields do not change its answer.
type engineView struct {
	url    string
	mu     sync.Mutex
	inject map[string]map[string]any // node uuid -> field -> value
}

func newEngineView(t *testing.T, ironicURL string) *engineView {
	t.Helper()
	target, _ := url.Parse(ironicURL)
	v := &engineView{inject: map[string]map[string]any{}}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Method != "GET" || !strings.HasPrefix(resp.Request.URL.Path, "/v1/nodes") || resp.StatusCode != 200 {
			return nil
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		b = v.rewrite(b)
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resp.ContentLength = int64(len(b))
		resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
		return nil
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	v.url = srv.URL
	return v
}

func (v *engineView) set(node, field string, value any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.inject[node] == nil {
		v.inject[node] = map[string]any{}
	}
	if value == nil {
		delete(v.inject[node], field)
		return
	}
	v.inject[node][field] = value
}

func (v *engineView) rewrite(b []byte) []byte {
	var page map[string]json.RawMessage
	if json.Unmarshal(b, &page) != nil || page["nodes"] == nil {
		return b
	}
	var nodes []map[string]any
	if json.Unmarshal(page["nodes"], &nodes) != nil {
		return b
	}
	v.mu.Lock()
	for _, n := range nodes {
		id, _ := n["uuid"].(string)
		for k, val := range v.inject[id] {
			if _, listed := n[k]; listed {
				n[k] = val
			}
		}
	}
	v.mu.Unlock()
	page["nodes"], _ = json.Marshal(nodes)
	out, _ := json.Marshal(page)
	return out
}

// novaRig is one cloud: a real Ironic, a real Placement, nova 26.2.2's
// reporting path and the engine (ironic.wasm), each writer behind its own
// write counter; and a model of what the engine must reserve.
type novaRig struct {
	t           *testing.T
	placement   string // direct, for the checks and the scheduler's claims
	ironic      *ironictest.Client
	ironicURL   string
	view        *engineView
	novaW, engW *writeCounter
	nova        *novatest.Nova
	novaDir     string
	cfg         string
	id          string
	plugin      string
	kinds       map[string][]string // node kind -> uuids
	rc          map[string]string   // node -> normalised class
	reserve     map[string]bool     // the engine's rules, as of its last cycle
	pending     map[string]bool     // the engine's rules now (applied at its next cycle)
	instances   map[string]string   // instance -> node
	windows     []string            // checkpoints where a reserved node was a candidate
	openSince   map[string]time.Time
	longest     time.Duration
	steps       int
	fleet       []fleetKind
	novaOpts    novatest.Options
	documented  []string // nova's error lines docs/NOVA.md names
}

// fleet kinds and how many of each; "hold" kinds differ from nova only in
// fields the engineView sets.
type fleetKind struct {
	kind string
	n    int
}

var novaFleet = []fleetKind{
	{"free", 12}, {"deploy", 4}, {"maint", 3}, {"manageable", 3}, {"enroll", 2},
	{"unpowered", 2}, {"retired", 2}, {"fault", 2}, {"transition", 2}, {"retired_avail", 1},
}

func newNovaRig(t *testing.T, beside bool) *novaRig {
	t.Helper()
	return newNovaRigWith(t, beside, novaFleet, "", "")
}

// newNovaRigWith is newNovaRig with another fleet, an engine [scope] and
// more [nova] settings.
func newNovaRigWith(t *testing.T, beside bool, fleet []fleetKind, scopeTOML, novaTOML string) *novaRig {
	t.Helper()
	placementURL := placementtest.StartReal(t)
	ironicURL := ironictest.StartReal(t)
	r := &novaRig{t: t, placement: placementURL, ironicURL: ironicURL, ironic: ironictest.NewClient(t, ironicURL),
		kinds: map[string][]string{}, rc: map[string]string{}, reserve: map[string]bool{}, pending: map[string]bool{},
		instances: map[string]string{}, openSince: map[string]time.Time{}}
	r.view = newEngineView(t, ironicURL)
	r.novaW, r.engW = newWriteCounter(t, placementURL), newWriteCounter(t, placementURL)
	r.plugin = plugintest.Build(t, "plugins/ironic")
	r.id = fmt.Sprintf("nova-e2e-%x", os.Getpid())
	r.novaDir = filepath.Join(t.TempDir(), "nova")
	r.fleet = fleet
	i := 0
	for _, k := range fleet {
		for range k.n {
			r.addNode(k.kind, i)
			i++
		}
	}
	if beside {
		novaTOML = fmt.Sprintf("\n[nova]\nbeside = true\nprovider_config_location = %q\n%s", novatest.ProviderConfigDir(r.novaDir), novaTOML)
	}
	r.cfg = ironicConfig(t, r.id, r.engW.url, r.plugin, r.view.url, "page_size = 10", scopeTOML)
	if novaTOML != "" {
		f, err := os.OpenFile(r.cfg, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(novaTOML)
		f.Close()
	}
	return r
}

func (r *novaRig) addNode(kind string, i int) {
	c, t := r.ironic, r.t
	class := []string{"baremetal-gold", "baremetal.silver"}[i%2]
	u := c.Create(t, ironictest.Spec{Name: fmt.Sprintf("%s-%d", kind, i), ResourceClass: class})
	r.kinds[kind] = append(r.kinds[kind], u)
	r.rc[u] = map[string]string{"baremetal-gold": "CUSTOM_BAREMETAL_GOLD", "baremetal.silver": "CUSTOM_BAREMETAL_SILVER"}[class]
	reserved := true
	switch kind {
	case "free", "deploy":
		c.Available(t, u)
		reserved = false // "deploy" nodes are deployed later
	case "maint":
		c.Available(t, u)
		c.Maintenance(t, u, true)
	case "manageable":
		c.Provision(t, u, "manage", "manageable")
	case "enroll":
	case "unpowered":
		c.Provision(t, u, "manage", "manageable")
		c.Provision(t, u, "provide", "available")
	case "retired":
		c.Provision(t, u, "manage", "manageable")
		c.Retire(t, u)
	case "fault":
		c.Available(t, u)
		r.view.set(u, "fault", "power failure")
	case "transition":
		c.Available(t, u)
		r.view.set(u, "target_provision_state", "active")
	case "retired_avail":
		c.Available(t, u)
		r.view.set(u, "retired", true)
	}
	r.pending[u] = reserved
}

func (r *novaRig) all() []string {
	var out []string
	for _, k := range r.fleet {
		out = append(out, r.kinds[k.kind]...)
	}
	return out
}

func (r *novaRig) startNova() {
	r.nova = novatest.Start(r.t, r.novaDir, r.ironicURL, r.novaW.url, r.novaOpts)
}

// novaStep runs nova's periodic (with the association refresh due when
// refresh is set) and returns nova's writes.
func (r *novaRig) novaStep(name string, startup, refresh bool) []string {
	r.t.Helper()
	if refresh {
		r.nova.RefreshDue(r.t)
	}
	r.nova.Periodic(r.t, startup)
	ws := r.novaW.take()
	r.checkpoint("nova " + name)
	return ws
}

// engineStep runs `engine once` and returns the engine's writes and report.
func (r *novaRig) engineStep(name string) ([]string, novaReport) {
	r.t.Helper()
	res := runEngine(r.t, "once", "--config", r.cfg, "--json")
	var rep novaReport
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil || res.code != 0 || len(rep.Errors) > 0 {
		r.t.Fatalf("engine once (%s): exit %d, %s\nstderr %s", name, res.code, res.stdout, res.stderr)
	}
	for u, v := range r.pending {
		r.reserve[u] = v
	}
	ws := r.engW.take()
	r.checkpoint("engine " + name)
	return ws, rep
}

type novaReport struct {
	report
	ForeignRewrites int                `json:"foreign_rewrites"`
	Nova            *engine.NovaReport `json:"nova"`
	Reserved        map[string]int     `json:"reserved_by_reason"`
}

// checkpoint asks the scheduler's question (GET /allocation_candidates)
// for each class and records any node the engine reserves that is a
// candidate, and for how long (wall clock, for the report only).
func (r *novaRig) checkpoint(step string) {
	r.t.Helper()
	r.steps++
	now := time.Now()
	cands := map[string]bool{}
	for _, rc := range r.classes() {
		var out struct {
			Summaries map[string]any `json:"provider_summaries"`
		}
		if code := placementGet(r.t, r.placement, "/allocation_candidates?resources="+rc+":1", &out); code != 200 {
			r.t.Fatalf("allocation_candidates: %d", code)
		}
		for u := range out.Summaries {
			cands[u] = true
		}
	}
	for u, reserved := range r.reserve {
		switch {
		case reserved && cands[u]:
			r.windows = append(r.windows, step+": "+u)
			if _, open := r.openSince[u]; !open {
				r.openSince[u] = now
			}
		default:
			if since, open := r.openSince[u]; open {
				r.longest = max(r.longest, now.Sub(since))
				delete(r.openSince, u)
			}
		}
	}
}

// classes are the nodes' classes, each once.
func (r *novaRig) classes() []string {
	var out []string
	for _, rc := range r.rc {
		out = append(out, rc)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// scheduleInstance claims a free node for a new instance as nova's
// scheduler does (an INSTANCE allocation), records it in nova and deploys
// it in Ironic.
func (r *novaRig) scheduleInstance(node, instance string) {
	r.t.Helper()
	body := map[string]any{"allocations": map[string]any{node: map[string]any{"resources": map[string]int{r.rc[node]: 1}}},
		"project_id": "e2e", "user_id": "e2e", "consumer_generation": nil, "consumer_type": "INSTANCE"}
	if code, b := placementDo(r.t, r.placement, "PUT", "/allocations/"+instance, body); code != 204 {
		r.t.Fatalf("scheduler claim of %s: %d %s", node, code, b)
	}
	r.instances[instance] = node
	r.nova.AddInstance(r.t, instance, node)
	r.ironic.Deploy(r.t, node, instance)
	r.pending[node] = true
}

// checkAllocations fails unless every instance's allocation is intact.
func (r *novaRig) checkAllocations() {
	r.t.Helper()
	for inst, node := range r.instances {
		var out struct {
			Allocations map[string]struct {
				Resources map[string]int `json:"resources"`
			} `json:"allocations"`
		}
		placementGet(r.t, r.placement, "/allocations/"+inst, &out)
		if len(out.Allocations) != 1 || out.Allocations[node].Resources[r.rc[node]] != 1 {
			r.t.Errorf("instance %s: allocations %+v, want 1 %s on %s", inst, out.Allocations, r.rc[node], node)
		}
	}
}

// providers returns the uuids of every provider in Placement.
func (r *novaRig) providers() []string {
	var out struct {
		Providers []struct {
			UUID string `json:"uuid"`
		} `json:"resource_providers"`
	}
	placementGet(r.t, r.placement, "/resource_providers", &out)
	var us []string
	for _, p := range out.Providers {
		us = append(us, p.UUID)
	}
	slices.Sort(us)
	return us
}

// holdOf returns the resources of the engine's hold on node.
func (r *novaRig) holdOf(node string) map[string]int {
	var out struct {
		Allocations map[string]struct {
			Resources map[string]int `json:"resources"`
		} `json:"allocations"`
	}
	placementGet(r.t, r.placement, "/allocations/"+engine.HoldConsumer(engine.OwnerTrait(r.id), node), &out)
	return out.Allocations[node].Resources
}

// checkProviders fails unless every node's provider is right by the
// engine's rules: a node it reserves is reserved in its inventory, held,
// or used by an instance; a free node is none of these; and every
// provider carries the owner marker when marked is set.
func (r *novaRig) checkProviders(marked bool) {
	r.t.Helper()
	owner := engine.OwnerTrait(r.id)
	used := map[string]bool{}
	for _, n := range r.instances {
		used[n] = true
	}
	for _, u := range r.all() {
		p, ok := readProvider(r.t, r.placement, u)
		if !ok {
			r.t.Errorf("node %s: no provider", u)
			continue
		}
		inv := p.Inventories[r.rc[u]]
		held := r.holdOf(u)[r.rc[u]] == 1
		blocked := inv.Reserved == 1 || held || used[u]
		if r.reserve[u] != blocked {
			r.t.Errorf("node %s: engine reserves %v, but reserved %d held %v used %v", u, r.reserve[u], inv.Reserved, held, used[u])
		}
		if slices.Contains(p.Traits, owner) != marked {
			r.t.Errorf("node %s: owner marker present %v, want %v (traits %v)", u, !marked, marked, p.Traits)
		}
	}
}
