package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
)

// novaHost is nova's host in scripts/nova/driver.py's nova.conf: the
// host whose instances both sides list.
const novaHost = "nova-e2e"

// replayChange is one change of bug 1841481's window: an instance lands
// on a free node (land), or a deployed node's instance moves to another
// host (Ironic clears instance_uuid, the instance's record and allocation
// leave this host).
type replayChange struct {
	side           string // "nova" or "engine": the side whose window it is
	land           bool
	node, instance string
	placement      string       // that side's own Placement, written directly (uncounted)
	servers        *computeStub // the engine's instance listing; nova's is its database (driver.py)
}

// window holds at most one armed change and applies it when the armed
// side's instance listing starts, which must be after a node listing
// answered since it was armed: the engine's through gate, nova's checked
// by driver.py around its own calls.
type window struct {
	ironic  string
	gate    *ironicGate
	servers *computeStub // the engine's instance listing
	mu      sync.Mutex
	armed   *replayChange
	since   int // gate's node listings when armed
	fired   int
}

func (w *window) arm(c replayChange) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed, w.since, w.fired = &c, w.gate.listings(), 0
}

// take returns how many times the armed change was applied since arm, and
// disarms.
func (w *window) take() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed = nil
	return w.fired
}

// fire applies the armed change if it is side's, once.
func (w *window) fire(ctx context.Context, side string) (*replayChange, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.armed
	if c == nil || c.side != side {
		return nil, nil
	}
	if side == "engine" && w.gate.listings() == w.since {
		return nil, fmt.Errorf("window: the engine listed instances before nodes")
	}
	w.armed = nil
	if err := c.apply(ctx, w.ironic); err != nil {
		return nil, err
	}
	w.fired++
	return c, nil
}

// apply makes the change in Ironic, the side's Placement and the engine's
// instance listing (nova's database is driver.py's part).
func (c *replayChange) apply(ctx context.Context, ironic string) error {
	if c.land { // the scheduler's claim, then nova-compute's spawn sets instance_uuid
		if err := claim(ctx, c.placement, c.instance, c.node); err != nil {
			return err
		}
		if err := setInstance(ctx, ironic, c.node, c.instance); err != nil {
			return err
		}
	} else {
		if err := setInstance(ctx, ironic, c.node, ""); err != nil {
			return err
		}
		if _, err := do(ctx, http.DefaultClient, "DELETE", c.placement+"/allocations/"+c.instance, nil); err != nil {
			return err
		}
	}
	if c.servers != nil {
		c.servers.set(c.instance, c.node, c.land)
	}
	return nil
}

// claim writes an instance's allocation of the node's whole class, as
// nova's scheduler does.
func claim(ctx context.Context, placement, instance, node string) error {
	body := map[string]any{"allocations": map[string]any{node: map[string]any{"resources": map[string]int{benchClass: 1}}},
		"project_id": "bench", "user_id": "bench", "consumer_generation": nil, "consumer_type": "INSTANCE"}
	_, err := do(ctx, http.DefaultClient, "PUT", placement+"/allocations/"+instance, body)
	return err
}

// benchClass is the Placement class of addNodes' nodes (baremetal-gold).
const benchClass = "CUSTOM_BAREMETAL_GOLD"

// setInstance sets (or, with "", removes) a node's instance_uuid in Ironic.
func setInstance(ctx context.Context, ironic, node, instance string) error {
	op := map[string]any{"op": "remove", "path": "/instance_uuid"}
	if instance != "" {
		op = map[string]any{"op": "add", "path": "/instance_uuid", "value": instance}
	}
	_, err := ironicDo(ctx, "PATCH", ironic+"/v1/nodes/"+node, []any{op}, http.StatusOK)
	return err
}

// novaHook answers driver.py's question at nova's window: the database
// side of the change it just applied, or null.
func (w *window) novaHook() http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		c, err := w.fire(r.Context(), "nova")
		if err != nil {
			http.Error(rw, err.Error(), http.StatusInternalServerError)
			return
		}
		var out any // null: nothing armed for nova
		switch {
		case c != nil && c.land:
			out = map[string]string{"op": "land", "uuid": c.instance, "node": c.node}
		case c != nil:
			out = map[string]string{"op": "move", "uuid": c.instance, "host": "elsewhere", "to_node": "elsewhere-node"}
		}
		_ = json.NewEncoder(rw).Encode(out)
	})
}

// ironicGate passes the engine's Ironic requests through and counts the
// node listings Ironic answered, before their body reaches the engine.
type ironicGate struct {
	mu sync.Mutex
	n  int
}

func (g *ironicGate) listings() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n
}

func (g *ironicGate) proxy(target string) (http.Handler, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(resp *http.Response) error {
		p := resp.Request.URL.Path
		if resp.Request.Method == http.MethodGet && resp.StatusCode == http.StatusOK && (p == "/v1/nodes" || p == "/v1/nodes/detail") {
			g.mu.Lock()
			g.n++
			g.mu.Unlock()
		}
		return nil
	}
	return rp, nil
}

// computeStub is the Compute API's server listing the Ironic plugin reads
// (GET /servers/detail?host=...): the engine's view of the instances on
// nova's host, the same records driver.py keeps in nova's database. Each
// listing first gives the window its chance.
type computeStub struct {
	w       *window
	mu      sync.Mutex
	servers map[string]string // instance uuid -> node uuid, on novaHost
}

func (s *computeStub) set(instance, node string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if on {
		s.servers[instance] = node
	} else {
		delete(s.servers, instance)
	}
}

func (s *computeStub) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || r.URL.Path != "/servers/detail" {
		http.NotFound(rw, r)
		return
	}
	if _, err := s.w.fire(r.Context(), "engine"); err != nil {
		http.Error(rw, err.Error(), http.StatusInternalServerError)
		return
	}
	type server struct {
		ID   string `json:"id"`
		Node string `json:"OS-EXT-SRV-ATTR:hypervisor_hostname"`
	}
	out := struct {
		Servers []server `json:"servers"`
		Links   []any    `json:"servers_links"`
	}{Servers: []server{}, Links: []any{}}
	s.mu.Lock()
	if r.URL.Query().Get("host") == novaHost && r.URL.Query().Get("marker") == "" {
		for id, node := range s.servers {
			out.Servers = append(out.Servers, server{id, node})
		}
	}
	s.mu.Unlock()
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(out)
}

// windowURLs are where newWindow serves: the gate in front of Ironic (the
// engine's baremetal service), the compute stub (its compute service) and
// the hook nova asks (DIR/window.url).
type windowURLs struct{ gate, compute, hook string }

// newWindow starts the gate in front of ironic, the compute stub
// (w.servers) and nova's hook; cleanup stops them.
func newWindow(ironic string, cleanup func(func())) (*window, windowURLs, error) {
	w := &window{ironic: ironic, gate: &ironicGate{}}
	gp, err := w.gate.proxy(ironic)
	if err != nil {
		return nil, windowURLs{}, err
	}
	w.servers = &computeStub{w: w, servers: map[string]string{}}
	var urls []string
	for _, h := range []http.Handler{gp, w.servers, w.novaHook()} {
		srv := httptest.NewServer(h)
		cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	return w, windowURLs{urls[0], urls[1], urls[2]}, nil
}
