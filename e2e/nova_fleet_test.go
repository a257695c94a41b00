package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/coord"
	"github.com/rpengine/rpengine/internal/testing/etcdtest"
	"github.com/rpengine/rpengine/internal/testing/novatest"
)

var fleetNova = []fleetKind{{"free", 4}, {"maint", 1}, {"retired_avail", 6}}

// TestNovaFleet is two engines dividing one fleet through the real etcd
// beside nova 26.2.2, set up exactly as `nova-config` and docs/NOVA.md
// ("Several engines") say: both print the same configuration, nova starts
// with it, and when the engine holding most holds is killed (-9) the
// survivor adopts its holds and releases the one whose node left its hold
// condition meanwhile, writing no owner marker; nova then writes nothing,
// and no poll of allocation_candidates offered a held node.
// `make test-nova` runs it.
func TestNovaFleet(t *testing.T) {
	if os.Getenv("RPENGINE_NOVA_E2E") != "1" {
		t.Skip("RPENGINE_NOVA_E2E unset: run it with `make test-nova`")
	}
	r := newNovaRigWith(t, true, fleetNova, `conductor_groups = [""]`, "compute_hosts = [\"nova-e2e\"]\n")
	etcd := etcdtest.Start(t)
	cfgs := map[string]string{}
	for _, id := range []string{r.id + "-a", r.id + "-b"} {
		cfgs[id] = fleetConfig(t, r.cfg, r.id, id, etcd)
	}
	marker := r.installFleetNovaConfig(cfgs)
	procs := map[string]*engineProc{}
	for id, cfg := range cfgs {
		cmd, logs := startDaemon(t, cfg)
		procs[id] = &engineProc{id: id, cfg: cfg, cmd: cmd}
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("engine %s log (tail):\n%s", id, tailString(logs.String(), 6000))
			}
		})
	}
	held := r.kinds["retired_avail"]
	var users map[string]string
	// Settled: both engines hold partitions, and each hold is its
	// partition's holder's (a hand-over while the second joined moved it).
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		users = r.waitHolds(marker, held, nil, 90*time.Second)
		wrong := r.holdsOffPartition(cfgs, users)
		if wrong == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("holds never settled with the partitions: %s", wrong)
		}
	}
	victim := mostHolds(users)
	var survivor string
	for id := range cfgs {
		if id != victim {
			survivor = id
		}
	}
	var theirs []string
	for _, u := range held {
		if users[u] == "rpengine-hold-"+victim {
			theirs = append(theirs, u)
		}
	}
	leaving, kept := theirs[0], slices.DeleteFunc(slices.Clone(held), func(u string) bool { return u == theirs[0] })
	t.Logf("FIGURE fleet: holds by user %v; killing %s (%d holds)", countUsers(users), victim, len(theirs))
	r.engW.take()
	poll := r.pollCandidates(kept...)
	_ = procs[victim].cmd.Process.Kill()
	killed := time.Now()
	r.view.set(leaving, "retired", false)
	users = r.waitHolds(marker, kept, []string{leaving}, 60*time.Second)
	took := time.Since(killed)
	polls, seen := poll.stop()
	writes := r.engW.take()
	for _, u := range kept {
		if users[u] != "rpengine-hold-"+survivor {
			t.Errorf("hold of %s by %q after the take-over, want the survivor's", u, users[u])
		}
	}
	for _, w := range writes {
		if strings.Contains(w, "/traits") {
			t.Errorf("the take-over wrote a marker nova would revert: %s", w)
		}
	}
	if len(seen) > 0 {
		t.Errorf("%d of %d polls offered a held node: %v", len(seen), polls, seen[:min(5, len(seen))])
	}
	if ws := r.novaStep("after the take-over", false, true); len(ws) > 0 {
		t.Errorf("nova wrote after the take-over: %v", ws)
	}
	t.Logf("FIGURE fleet: kill -9 to holds adopted and the leaving node's released: %s; engine writes %d (%v); polls %d, held offered %d",
		took.Round(100*time.Millisecond), len(writes), writes, polls, len(seen))
}

// fleetConfig is base's engine config for engine id of a two-engine fleet
// on etcd: 8 partitions, a 2 s lease, a 2 s interval.
func fleetConfig(t *testing.T, base, baseID, id, etcd string) string {
	t.Helper()
	b, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), fmt.Sprintf("id = %q", baseID), fmt.Sprintf("id = %q", id), 1)
	text = strings.Replace(text, `interval = "5s"`, `interval = "2s"`, 1)
	text += fmt.Sprintf("\n[coord]\netcd = [%q]\npartitions = 8\nlease_ttl = \"2s\"\n", etcd)
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

var fleetMarkerRE = regexp.MustCompile(`CUSTOM_RPENGINE_OWNER_FLEET_[A-Z0-9_]+`)

// installFleetNovaConfig checks that every engine prints the same
// nova-config, installs it as docs/NOVA.md says, starts nova with it and
// returns the fleet's marker.
func (r *novaRig) installFleetNovaConfig(cfgs map[string]string) string {
	t := r.t
	var text string
	for id, cfg := range cfgs {
		res := runEngine(t, "nova-config", "--config", cfg)
		switch {
		case res.code != 0:
			t.Fatalf("nova-config of %s: %d %s", id, res.code, res.stderr)
		case text != "" && res.stdout != text:
			t.Fatalf("engines of one fleet print different nova-configs:\n%s\n---\n%s", text, res.stdout)
		}
		text = res.stdout
	}
	conf, rest, _ := strings.Cut(text, "\n# --- ")
	file, yaml, _ := strings.Cut(rest, " ---\n")
	marker := fleetMarkerRE.FindString(yaml)
	if marker == "" || filepath.Dir(file) != novatest.ProviderConfigDir(r.novaDir) {
		t.Fatalf("nova-config printed:\n%s", text)
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
	r.novaStep("start-up with the fleet's nova-config", true, false)
	if len(r.providers()) != len(r.all()) {
		t.Fatalf("nova made %d providers for %d nodes", len(r.providers()), len(r.all()))
	}
	return marker
}

// waitHolds waits until every node of want carries the fleet's hold and
// no node of gone does, and returns each hold's user.
func (r *novaRig) waitHolds(marker string, want, gone []string, within time.Duration) map[string]string {
	r.t.Helper()
	deadline := time.Now().Add(within)
	for {
		users, missing := map[string]string{}, ""
		for _, u := range append(slices.Clone(want), gone...) {
			var c struct {
				Allocations map[string]any `json:"allocations"`
				User        string         `json:"user_id"`
			}
			placementGet(r.t, r.placement, "/allocations/"+engine.HoldConsumer(marker, u), &c)
			switch has := len(c.Allocations) > 0; {
			case has && slices.Contains(gone, u):
				missing = u + " still held"
			case !has && !slices.Contains(gone, u):
				missing = u + " not held"
			case has:
				users[u] = c.User
			}
		}
		if missing == "" {
			return users
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("holds not as wanted within %s: %s (users %v)", within, missing, users)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// holdsOffPartition says which hold is not its partition holder's, or
// that the division is not settled (a move pending, an engine with
// nothing), or "".
func (r *novaRig) holdsOffPartition(cfgs map[string]string, users map[string]string) string {
	var cfg string
	for _, c := range cfgs {
		cfg = c
	}
	res := runEngine(r.t, "status", "--json", "--config", cfg)
	var st coord.Status
	if err := json.Unmarshal([]byte(res.stdout), &st); err != nil {
		r.t.Fatalf("status: exit %d: %v\n%s", res.code, err, res.stderr)
	}
	if len(st.Pending) > 0 || len(st.Claims) != 8 || len(countValues(st.Claims)) != len(cfgs) {
		return fmt.Sprintf("division not settled: claims %v, pending %v", st.Claims, st.Pending)
	}
	for u, user := range users {
		holder := st.Claims[coord.PartitionUnit(8, engine.Partition(u, 8))]
		if user != "rpengine-hold-"+holder {
			return fmt.Sprintf("hold of %s by %s, its partition held by %s", u, user, holder)
		}
	}
	return ""
}

func countValues(m map[string]string) map[string]int {
	out := map[string]int{}
	for _, v := range m {
		out[v]++
	}
	return out
}

func countUsers(users map[string]string) map[string]int { return countValues(users) }

// mostHolds is the engine id whose hold user holds the most holds.
func mostHolds(users map[string]string) string {
	best, n := "", 0
	for user, c := range countUsers(users) {
		if c > n || c == n && user < best {
			best, n = user, c
		}
	}
	return strings.TrimPrefix(best, "rpengine-hold-")
}
