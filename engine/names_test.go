package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// amnesia is a proxy in front of the fake that makes it forget names, as
// a Placement restored empty or from an old backup has: a provider write
// naming a lost class or trait answers Placement's 400, until the name is
// created again (PUT /resource_classes/X or /traits/X). stubborn names
// stay lost whatever is created.
type amnesia struct {
	mu             sync.Mutex
	lost, stubborn map[string]bool
	inventoryPuts  int
}

func (a *amnesia) lose(names ...string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, n := range names {
		a.lost[n] = true
	}
}

func (a *amnesia) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if detail := a.refusal(r, body); detail != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"errors": [{"status": 400, "title": "Bad Request", "detail": %q, "code": "placement.undefined_code", "request_id": "req-1"}]}`, detail)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refusal is Placement's detail for a write naming a lost name, or "".
func (a *amnesia) refusal(r *http.Request, body []byte) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if r.Method != "PUT" {
		return ""
	}
	if len(parts) == 2 && (parts[0] == "resource_classes" || parts[0] == "traits") && !a.stubborn[parts[1]] {
		delete(a.lost, parts[1])
		return ""
	}
	if len(parts) != 3 || parts[0] != "resource_providers" {
		return ""
	}
	if parts[2] == "inventories" {
		a.inventoryPuts++
	}
	for n := range a.lost {
		if !bytes.Contains(body, []byte(`"`+n+`"`)) {
			continue
		}
		if parts[2] == "inventories" && !strings.Contains(n, "TRAIT") {
			return "Unknown resource class in inventory for resource provider " + parts[1] + ": No such resource class " + n + "."
		}
		if parts[2] == "traits" && strings.Contains(n, "TRAIT") {
			return "No such trait " + n
		}
	}
	return ""
}

// A Placement that lost a class and a trait the engine created (restored
// empty, or from an old backup) is healed in the cycle that meets the
// refusal, with no restart: the name book forgets them and the write is
// sent again after creating them. A name that stays missing costs one
// retry per write, not a loop.
func TestLostNamesAreCreatedAgain(t *testing.T) {
	fake := placementfake.New()
	defer fake.Close()
	am := &amnesia{lost: map[string]bool{}, stubborn: map[string]bool{}}
	target, _ := url.Parse(fake.URL())
	proxy := httptest.NewServer(am.handler(httputil.NewSingleHostReverseProxy(target)))
	defer proxy.Close()
	pc, err := placement.New(context.Background(), placement.Config{Endpoint: proxy.URL, Token: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	node := hostabi.Node{UUID: nodeUUID(1), ResourceClass: "gpu", Traits: []string{"CUSTOM_GPU_TRAIT"},
		PowerState: "power on", ProvisionState: "available"}
	src := &source{nodes: []hostabi.Node{node}}
	eng := engine.New(src, pc, engine.Policy{OwnerTrait: engine.OwnerTrait("names")}, engine.Options{Concurrency: 1}, nil, nil)
	if r := eng.Cycle(context.Background()); len(r.Errors) > 0 || r.Created != 1 {
		t.Fatalf("first cycle: %+v", r)
	}

	am.lose("CUSTOM_GPU", "CUSTOM_GPU_TRAIT")
	src.set(func(s *source) {
		s.nodes[0].Maintenance = true
		s.nodes[0].Traits = []string{"CUSTOM_GPU_TRAIT", "CUSTOM_NEW_TRAIT"}
	})
	if r := eng.Cycle(context.Background()); len(r.Errors) > 0 || r.Updated != 1 {
		t.Fatalf("the cycle that met the refusals: %+v", r)
	}
	p, _ := fake.Provider(node.UUID)
	if p.Inventories["CUSTOM_GPU"].Reserved != 1 || !strings.Contains(strings.Join(p.Traits, ","), "CUSTOM_NEW_TRAIT") {
		t.Fatalf("the writes did not land: %+v", p)
	}

	am.lose("CUSTOM_GPU")
	am.stubborn["CUSTOM_GPU"] = true
	am.inventoryPuts = 0
	src.set(func(s *source) { s.nodes[0].Maintenance = false })
	r := eng.Cycle(context.Background())
	if len(r.Errors) != 1 || !strings.Contains(r.Errors[0].Message, "No such resource class CUSTOM_GPU") {
		t.Fatalf("a class that stays missing: errors %+v, want the refusal", r.Errors)
	}
	if am.inventoryPuts != 2 {
		t.Fatalf("a class that stays missing: %d inventory writes, want 2 (one retry)", am.inventoryPuts)
	}
}

// A new engine's first cycle creates each custom name once, and asks
// once which standard traits exist: the syncs that need a name while one
// of them creates it wait for that creation (Placement is slow to answer
// here, so all four workers need the owner trait, the class and the
// marker at once). Each used to send its own request.
func TestEachNewNameIsCreatedOnce(t *testing.T) {
	r := newRig(t, 40)
	r.fake.Inject(placementfake.Fault{Method: "PUT", Path: "/traits/*", Delay: 30 * time.Millisecond})
	r.fake.Inject(placementfake.Fault{Method: "PUT", Path: "/resource_classes/*", Delay: 30 * time.Millisecond})
	r.fake.Inject(placementfake.Fault{Method: "GET", Path: "/traits", Delay: 30 * time.Millisecond})
	if rep := r.cycle(); len(rep.Errors) > 0 || rep.Created != 40 {
		t.Fatalf("first cycle: created %d, %v", rep.Created, rep.ErrorMessages())
	}
	puts, asks := map[string]int{}, 0
	for _, q := range r.fake.Requests() {
		if q.Method == "PUT" && (strings.HasPrefix(q.Path, "/traits/") || strings.HasPrefix(q.Path, "/resource_classes/")) {
			puts[q.Path]++
		}
		if q.Method == "GET" && q.Path == "/traits" && strings.Contains(q.Query, "COMPUTE_NODE") {
			asks++
		}
	}
	if len(puts) == 0 || asks != 1 {
		t.Fatalf("names created %v, standard traits asked %d times; want some created, asked once", puts, asks)
	}
	for path, n := range puts {
		if n != 1 {
			t.Errorf("%s sent %d times, want once: %v", path, n, puts)
		}
	}
}
