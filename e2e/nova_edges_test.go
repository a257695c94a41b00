package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/testing/novatest"
)

// edgeFleet is small: the edges are per node.
var edgeFleet = []fleetKind{{"free", 3}, {"maint", 1}, {"retired_avail", 3}}

// TestNovaEdges is the arrangement's edges with nova 26.2.2's own
// reporting path, the real Ironic and the real Placement, the engine's
// scope one conductor group (Ironic's default, the only one an all-in-one
// Ironic serves):
//
//  1. nova started with exactly the nova.conf lines and YAML `engine
//     nova-config` prints (partition_key with peer_list, $COMPUTE_NODE);
//  2. a node enrolled after the migration: covered without a restart, no
//     rewrite by either side over the next two refreshes;
//  3. a held node's class changes, nova's periodic first (its inventory
//     write refused once: the documented line) and, for another, the
//     engine first (nothing refused): no poll of allocation_candidates
//     sees either offered;
//  4. a claimed node's class changes (nova_claimed_test.go);
//  5. a held node deleted from Ironic: its hold handed over to the
//     deletion with no poll seeing it offered;
//  6. a free node leaves the engine's scope while nova still reports it
//     (nova_leftscope_test.go): held, never offered, released on return;
//  7. nova reporting OWNER_NOVA as nova 34 does: neither refused nor
//     fought over.
//
// `make test-nova` runs it with TestNovaBeside.
func TestNovaEdges(t *testing.T) {
	if os.Getenv("RPENGINE_NOVA_E2E") != "1" {
		t.Skip("RPENGINE_NOVA_E2E unset: run it with `make test-nova`")
	}
	r := newNovaRigWith(t, true, edgeFleet, `conductor_groups = [""]`, "compute_hosts = [\"nova-e2e\"]\n")
	r.migrateWithNovaConfig()
	r.enrolLater()
	r.classChangeUnderHold()
	r.claimedClassChange()
	r.heldNodeDeleted()
	r.leftScope()
	r.ownerNova()
	if len(r.windows) > 0 {
		t.Fatalf("nodes the engine reserves were candidates: %v", r.windows)
	}
	r.checkNovaErrors()
}

// migrateWithNovaConfig starts nova with exactly nova-config's lines.
func (r *novaRig) migrateWithNovaConfig() {
	t := r.t
	res := runEngine(t, "nova-config", "--config", r.cfg)
	if res.code != 0 {
		t.Fatalf("nova-config: %d %s", res.code, res.stderr)
	}
	conf, rest, ok := strings.Cut(res.stdout, "\n# --- ")
	file, yaml, _ := strings.Cut(rest, " ---\n")
	if !ok || !strings.Contains(conf, "partition_key = \npeer_list = nova-e2e\n") || !strings.Contains(yaml, "uuid: '$COMPUTE_NODE'") {
		t.Fatalf("nova-config printed:\n%s", res.stdout)
	}
	if filepath.Dir(file) != novatest.ProviderConfigDir(r.novaDir) {
		t.Fatalf("nova-config names %s, nova reads %s", file, novatest.ProviderConfigDir(r.novaDir))
	}
	extra := filepath.Join(t.TempDir(), "nova-config.conf")
	if err := os.WriteFile(extra, []byte(conf+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	r.novaOpts.ExtraConf = extra
	r.startNova()
	ws := r.novaStep("start-up with nova-config's lines", true, false)
	t.Logf("FIGURE nova-config: nova started with exactly its lines and wrote %d times (providers with the marker)", len(ws))
	if len(r.providers()) != len(r.all()) {
		t.Fatalf("nova with partition_key made %d providers for %d nodes", len(r.providers()), len(r.all()))
	}
	ews, rep := r.engineStep("first cycle")
	held := len(r.kinds["retired_avail"])
	if rep.Created != 0 || rep.Nova == nil || rep.Nova.Placed != held || len(ews) != held {
		t.Fatalf("first engine cycle: %+v %+v, writes %v", rep.report, rep.Nova, ews)
	}
	t.Logf("FIGURE nova-config: the engine's first cycle wrote %d times (the holds)", len(ews))
	r.quiet("after the migration", 2)
}

// quiet runs rounds (an association refresh, then an engine cycle) that
// must write nothing on either side.
func (r *novaRig) quiet(what string, rounds int) {
	r.t.Helper()
	for i := range rounds {
		nw := r.novaStep(fmt.Sprintf("%s, refresh %d", what, i), false, true)
		ew, rep := r.engineStep(fmt.Sprintf("%s, after refresh %d", what, i))
		r.t.Logf("FIGURE after (%s, refresh %d): nova %d writes, engine %d writes (%d requests), %d foreign rewrites",
			what, i, len(nw), len(ew), rep.PlacementRequests, rep.ForeignRewrites)
		// Idle beside nova, `engine once` is 2 requests: the owner listing
		// and the hold project's usage (the book is in the record).
		if len(nw)+len(ew) != 0 || rep.ForeignRewrites != 0 || rep.PlacementRequests != 2 {
			r.t.Fatalf("%s, round %d: nova wrote %v, the engine %v in %d requests (foreign rewrites %d)", what, i, nw, ew, rep.PlacementRequests, rep.ForeignRewrites)
		}
	}
	r.checkProviders(true)
}

// enrolLater enrols a node after the migration: nova's $COMPUTE_NODE
// entry marks it at nova's first report, with no restart.
func (r *novaRig) enrolLater() {
	t := r.t
	r.addNode("free", 100)
	u := r.kinds["free"][len(r.kinds["free"])-1]
	nw := r.novaStep("enrolment", false, false)
	ew, rep := r.engineStep("enrolment")
	t.Logf("FIGURE enrolment: nova %d writes (the new provider, marked), engine %d writes, %d foreign rewrites", len(nw), len(ew), rep.ForeignRewrites)
	if p, ok := readProvider(t, r.placement, u); !ok || !slices.Contains(p.Traits, engine.OwnerTrait(r.id)) {
		t.Fatalf("enrolled node %s: provider %v %+v", u, ok, p)
	}
	if rep.Created != 0 || rep.ForeignRewrites != 0 {
		t.Fatalf("enrolment: %+v", rep.report)
	}
	r.quiet("after an enrolment", 2)
	if res := runEngine(t, "validate", "--config", r.cfg); res.code != 0 || !strings.Contains(res.stdout, "beside nova") {
		t.Fatalf("validate after the enrolment: %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}

// classChangeUnderHold changes the class of two held nodes in Ironic:
// nova's periodic sees the first before the engine, the engine the second.
func (r *novaRig) classChangeUnderHold() {
	t := r.t
	first, second := r.kinds["retired_avail"][0], r.kinds["retired_avail"][1]
	r.rc[first], r.rc[second] = "CUSTOM_BAREMETAL_BRONZE", "CUSTOM_BAREMETAL_BRONZE"
	p := r.pollCandidates(first, second)
	r.ironic.SetResourceClass(t, first, "baremetal-bronze")
	before := len(r.nova.Errors())
	nw := r.novaStep("class change, nova first", false, false)
	refused := r.nova.Errors()[before:]
	for _, l := range refused[:min(len(refused), 3)] {
		t.Logf("FIGURE class change (nova first): nova logged: %.400s", l)
	}
	if !slices.ContainsFunc(refused, func(l string) bool {
		return strings.Contains(l, "Failed to update inventory") && strings.Contains(l, "placement.inventory.inuse")
	}) {
		t.Fatalf("nova's refused write is not the documented line: %v", refused)
	}
	r.documented = append(r.documented, refused...)
	ew, rep := r.engineStep("class change, nova first")
	t.Logf("FIGURE class change (nova first): nova %d writes (refused: %d error lines), engine %d writes %v", len(nw), len(refused), len(ew), ew)
	if rep.Nova.Placed != 1 || r.holdOf(first)["CUSTOM_BAREMETAL_BRONZE"] != 1 {
		t.Fatalf("class change: %+v, hold %v", rep.Nova, r.holdOf(first))
	}
	nw = r.novaStep("class change, nova after the engine", false, false)
	t.Logf("FIGURE class change (nova first): nova's next periodic %d writes %v", len(nw), nw)

	r.ironic.SetResourceClass(t, second, "baremetal-bronze")
	before = len(r.nova.Errors())
	ew, _ = r.engineStep("class change, engine first")
	nw = r.novaStep("class change, engine first", false, false)
	t.Logf("FIGURE class change (engine first): engine %d writes %v, nova %d writes %v", len(ew), ew, len(nw), nw)
	// nova's cached generation predates the reshape: its write is a
	// generation conflict it re-reads and retries, as after any claim.
	for _, e := range r.nova.Errors()[before:] {
		if !strings.Contains(e, "placement.concurrent_update") {
			t.Fatalf("nova logged after the engine moved the hold first: %s", e)
		}
	}
	r.quiet("after the class changes", 2)
	polls, seen := p.stop()
	t.Logf("FIGURE class change under a hold: %d polls of allocation_candidates, %d saw a held node offered", polls, len(seen))
	if polls == 0 || len(seen) > 0 {
		t.Fatalf("class change under a hold: %d polls, offered: %v", polls, seen)
	}
}

// heldNodeDeleted deletes a held node in Ironic: nova's orphan delete is
// refused (held), the engine proves it gone and deletes it; no poll may
// see it offered on the way.
func (r *novaRig) heldNodeDeleted() {
	t := r.t
	u := r.kinds["retired_avail"][2]
	p := r.pollCandidates(u)
	r.ironic.Delete(t, u)
	r.kinds["retired_avail"] = r.kinds["retired_avail"][:2]
	delete(r.reserve, u)
	delete(r.pending, u)
	before := len(r.nova.Errors())
	nw := r.novaStep("held node deleted", false, false)
	t.Logf("FIGURE held node deleted: nova %d writes %v", len(nw), nw)
	// nova's orphan delete is refused while the node is held (docs/NOVA.md).
	for _, l := range r.nova.Errors()[before:] {
		if !strings.Contains(l, "Failed to delete resource provider") || !strings.Contains(l, "Resource provider has allocations") {
			t.Fatalf("nova logged at the deletion: %s", l)
		}
		t.Logf("FIGURE held node deleted: nova logged: %.300s", l)
		r.documented = append(r.documented, l)
	}
	// First proof: the provider fully reserved (pending_deletion), then
	// the hold released; second proof: the provider deleted.
	ew, rep := r.engineStep("held node deleted, first proof")
	t.Logf("FIGURE held node deleted, first proof: engine %d writes %v, hold released %d", len(ew), ew, rep.Nova.Released)
	if rep.Nova.Released != 1 {
		t.Fatalf("first proof: %+v", rep.Nova)
	}
	ew, rep = r.engineStep("held node deleted, second proof")
	t.Logf("FIGURE held node deleted, second proof: engine %d writes %v, deleted %d", len(ew), ew, rep.Deleted)
	if _, ok := readProvider(t, r.placement, u); ok || rep.Deleted != 1 {
		t.Fatalf("provider of the deleted node %s still there after the second proof: %+v", u, rep.report)
	}
	polls, seen := p.stop()
	t.Logf("FIGURE held node deleted: %d polls of allocation_candidates, %d saw it offered", polls, len(seen))
	if polls == 0 || len(seen) > 0 {
		t.Fatalf("held node deleted: %d polls, offered: %v", polls, seen)
	}
	if h := r.holdOf(u); len(h) != 0 {
		t.Fatalf("hold left on a deleted node: %v", h)
	}
	r.quiet("after the deletion", 1)
}

// ownerNova restarts nova reporting OWNER_NOVA as nova 34 does.
func (r *novaRig) ownerNova() {
	t := r.t
	r.nova.Stop()
	r.novaOpts.OwnerNova = true
	r.startNova()
	nw := r.novaStep("restart as nova 34 (OWNER_NOVA)", true, false)
	ew, rep := r.engineStep("beside nova 34")
	t.Logf("FIGURE OWNER_NOVA: nova %d writes at its restart, engine %d writes, %d foreign rewrites, %d errors", len(nw), len(ew), rep.ForeignRewrites, len(rep.Errors))
	if len(ew) != 0 || rep.ForeignRewrites != 0 {
		t.Fatalf("beside nova 34: engine wrote %v, %+v", ew, rep.report)
	}
	r.quiet("beside nova 34", 2)
	for _, u := range r.all() {
		if p, _ := readProvider(t, r.placement, u); !slices.Contains(p.Traits, engine.OwnerNova) || !slices.Contains(p.Traits, engine.OwnerTrait(r.id)) {
			t.Errorf("node %s: traits %v", u, p.Traits)
		}
	}
	if res := runEngine(t, "validate", "--config", r.cfg); res.code != 0 || strings.Contains(res.stdout, "warn") {
		t.Fatalf("validate beside nova 34: %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}

// checkNovaErrors allows nova's retried generation conflicts and the
// documented refusal of a class change under a hold (docs/NOVA.md).
func (r *novaRig) checkNovaErrors() {
	var conflicts, documented int
	for _, e := range r.nova.Errors() {
		switch {
		case slices.Contains(r.documented, e):
			documented++
		case strings.Contains(e, "placement.concurrent_update"):
			conflicts++
		default:
			r.t.Errorf("nova logged: %.500s", e)
		}
	}
	r.t.Logf("FIGURE nova logged %d generation conflicts it retried and %d documented lines (the class change it saw first, the orphan delete of a held node)", conflicts, documented)
}

// candidatePoller asks allocation_candidates, as nova's scheduler does,
// every few milliseconds until stopped, and records each answer that
// offers one of its nodes.
type candidatePoller struct {
	stopped chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	polls   int
	seen    []string
}

func (r *novaRig) pollCandidates(nodes ...string) *candidatePoller {
	p := &candidatePoller{stopped: make(chan struct{}), done: make(chan struct{})}
	classes := append(r.classes(), "CUSTOM_BAREMETAL_BRONZE")
	go func() {
		defer close(p.done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.stopped:
				return
			case <-tick.C:
			}
			for _, rc := range classes {
				offered, err := offeredNow(r.placement, rc)
				p.mu.Lock()
				p.polls++
				if err != nil {
					p.seen = append(p.seen, "poll failed: "+err.Error())
				}
				for _, u := range nodes {
					if offered[u] {
						p.seen = append(p.seen, fmt.Sprintf("%s as %s at %s", u, rc, time.Now().Format("15:04:05.000")))
					}
				}
				p.mu.Unlock()
			}
		}
	}()
	return p
}

func (p *candidatePoller) stop() (int, []string) {
	close(p.stopped)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.polls, p.seen
}

// offeredNow asks GET /allocation_candidates for one unit of rc, as nova's
// scheduler asks for a bare-metal flavor, and returns the providers offered.
func offeredNow(base, rc string) (map[string]bool, error) {
	req, _ := http.NewRequest("GET", base+"/allocation_candidates?resources="+rc+":1", nil)
	req.Header.Set("X-Auth-Token", "admin")
	req.Header.Set("OpenStack-API-Version", "placement 1.39")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out struct {
		Summaries map[string]json.RawMessage `json:"provider_summaries"`
	}
	if resp.StatusCode != 200 {
		return nil, nil // a class Placement does not know yet
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, err
	}
	offered := map[string]bool{}
	for u := range out.Summaries {
		offered[u] = true
	}
	return offered, nil
}
