package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// takeOver stops engine v by end while its nodes change, and checks the
// survivors' take-over (see TestTakeOverAtFleetScaleE2E).
func (f *fleetRig) takeOver(v int, end func(*eventRig), how string) {
	t := f.t
	var victim []string // its nodes no earlier change touched
	for _, u := range f.owned(v) {
		if f.state[u] == "" {
			victim = append(victim, u)
		}
	}
	if len(victim) == 0 {
		t.Fatalf("engine %d owns nothing before the %s", v, how)
	}
	p := f.poll()
	changed := f.change(victim, 7) // changes the victim still serves
	held := f.holders()
	f.dead[v] = true // from here its requests are not the survivors'
	before := f.requests()
	killed := time.Now()
	end(f.engines[v])
	for time.Since(killed) < f.ttl {
		changed = append(changed, f.change(victim[len(changed):], 1)...)
	}
	deadline := killed.Add(f.ttl + 10*time.Second)
	took, wrong := f.until(killed, deadline, changed, changed)
	if len(wrong) > 0 {
		t.Errorf("%s: %.1f s after it, past lease TTL + 10 s, changed nodes still wrong: %v", how, took.Seconds(), wrong)
	}
	// The unchanged nodes' marker flips follow (urgent first, takeover.go).
	all, wrong := f.until(killed, killed.Add(f.ttl+time.Minute), victim, nil)
	if len(wrong) > 0 {
		t.Errorf("%s: %.1f s after it, nodes still not taken over: %v", how, all.Seconds(), wrong[:min(len(wrong), 10)])
	}
	time.Sleep(2 * time.Second) // the take-over cycle's last writes, counted below
	reqs := f.requests() - before
	moved := f.handedOver(held, v)
	flips := float64(len(victim) + moved)
	time.Sleep(time.Until(deadline.Add(10 * time.Second)))
	polls, early, late := p.stop(deadline)
	t.Logf("FIGURE %s of %d providers (%d changed, %d more handed between survivors): changed ones right %.1f s after it, all taken over %.1f s after it (TTL %s); survivors' Placement requests %.0f (%.2f a provider that changed owner); %d polls, %d offered a node Ironic had taken away before the deadline, %d after",
		how, len(victim), len(changed), moved, took.Seconds(), all.Seconds(), f.ttl, reqs, reqs/flips, polls, len(early), len(late))
	f.keepLogs(how)
	for i, e := range f.engines {
		if !f.dead[i] {
			words := append([]string{"assignment", "msg=cycle", "left behind"}, changed[len(changed)-4:]...)
			t.Logf("engine %d after the %s:\n%s", i, how, linesSince(e.logPath, killed, words...))
		}
	}
	if len(late) > 0 {
		t.Errorf("%s: polls after TTL + 10 s offered nodes Ironic had taken away: %v", how, late[:min(len(late), 10)])
	}
	if reqs > 1.5*flips {
		t.Errorf("%s: %.0f Placement requests for %.0f providers that changed owner: more than 1.5 a provider", how, reqs, flips)
	}
}

// holders maps each provider to the engine whose marker it carries.
func (f *fleetRig) holders() map[string]int {
	m := map[string]int{}
	for i := range f.engines {
		for _, u := range f.owned(i) {
			m[u] = i
		}
	}
	return m
}

// handedOver counts the providers a live engine held before and another
// holds now: when the fleet shrinks, the bounded-load assignment
// (internal/coord, Assign) may move a survivor's partition too, and each
// of its providers is a marker flip like the victim's.
func (f *fleetRig) handedOver(before map[string]int, victim int) int {
	n := 0
	for u, i := range f.holders() {
		if was, ok := before[u]; ok && was != victim && was != i {
			n++
		}
	}
	return n
}

// until polls until the nodes us are right (f.wrong) or the deadline; it
// returns how long after stop that was, and what is still wrong.
func (f *fleetRig) until(stop, deadline time.Time, us, changed []string) (time.Duration, []string) {
	for {
		at := time.Now()
		wrong := f.wrong(us, changed)
		switch {
		case len(wrong) == 0 && at.After(deadline):
			return at.Sub(stop), []string{"right only after the deadline"}
		case len(wrong) == 0 || at.After(deadline):
			return at.Sub(stop), wrong
		}
		// Once a second, and once just before the deadline.
		time.Sleep(min(time.Second, max(time.Until(deadline)-10*time.Millisecond, 10*time.Millisecond)))
	}
}

// change makes k changes in Ironic to the first nodes of us, one every
// 1.5 s, cycling through the kinds a scheduler must follow, and returns
// the nodes changed.
func (f *fleetRig) change(us []string, k int) []string {
	c := f.base.ironic
	var done []string
	for i := range min(k, len(us)) {
		u, kind := us[i], []string{"maintenance", "reclassed", "deleted", "manageable", "returned"}[len(f.state)%5]
		switch kind {
		case "maintenance":
			c.Maintenance(f.t, u, true)
		case "reclassed":
			c.SetResourceClass(f.t, u, f.other)
		case "deleted":
			c.Delete(f.t, u)
		case "manageable":
			c.Provision(f.t, u, "manage", "manageable")
		case "returned": // in maintenance a moment, then back: offered again
			c.Maintenance(f.t, u, true)
			f.mark(u, "maintenance")
			c.Maintenance(f.t, u, false)
		}
		f.mark(u, kind)
		done = append(done, u)
		time.Sleep(1500 * time.Millisecond)
	}
	return done
}

// mark records node u's change once Ironic has it.
func (f *fleetRig) mark(u, kind string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.state[u] = kind
	if kind == "returned" {
		delete(f.bad, u)
	} else {
		f.bad[u] = time.Now()
	}
}

// wrong lists the nodes of us not as they must be in Placement: each
// owned by a live engine, each changed one as its change requires.
func (f *fleetRig) wrong(us, changed []string) []string {
	owner := map[string]int{}
	for i := range f.engines {
		if !f.dead[i] {
			for _, u := range f.owned(i) {
				owner[u]++
			}
		}
	}
	var out []string
	for _, u := range us {
		f.mu.Lock()
		kind := f.state[u]
		f.mu.Unlock()
		if kind != "deleted" && owner[u] != 1 {
			out = append(out, fmt.Sprintf("%s owned by %d live engines", u, owner[u]))
		}
		if slices.Contains(changed, u) {
			if why := f.misplaced(u, kind); why != "" {
				out = append(out, u+" "+kind+": "+why)
			}
		}
	}
	return out
}

// misplaced says how node u's provider differs from what its change
// requires ("" when it does not).
func (f *fleetRig) misplaced(u, kind string) string {
	p, ok := f.inventories(u)
	inv, ok2 := p.Inventories[f.rc]
	switch {
	case kind == "deleted" && ok && !fullyReserved(p):
		return fmt.Sprintf("provider still offered: %v", p.Inventories)
	case kind == "deleted": // gone, or reserved until proven gone twice
		return ""
	case !ok:
		return "no provider"
	case kind == "reclassed" && (ok2 || p.Inventories[f.otherRC()].Total != 1 || p.Inventories[f.otherRC()].Reserved != 0):
		return fmt.Sprintf("inventories %v", p.Inventories)
	case kind == "reclassed":
		return ""
	case !ok2 || len(p.Inventories) != 1:
		return fmt.Sprintf("inventories %v", p.Inventories)
	case kind == "returned" && inv.Reserved != 0, kind != "returned" && inv.Reserved != inv.Total:
		return fmt.Sprintf("reserved %d of %d", inv.Reserved, inv.Total)
	}
	return ""
}

// inventories reads provider u's inventories in one request (ok false:
// no provider): the test must not load the one Placement it measures.
func (f *fleetRig) inventories(u string) (providerView, bool) {
	var out struct {
		Inventories map[string]inventory `json:"inventories"`
	}
	if placementGet(f.t, f.base.placement, "/resource_providers/"+u+"/inventories", &out) != 200 {
		return providerView{}, false
	}
	return providerView{Inventories: out.Inventories}, true
}

// fleetPoller asks allocation_candidates for the fleet's class, as nova's
// scheduler does, and keeps each answer offering a node Ironic had taken
// away when the poll began.
type fleetPoller struct {
	stopped, done chan struct{}
	polls         int
	seen          []offer
}

type offer struct {
	at   time.Time
	node string
}

func (f *fleetRig) poll() *fleetPoller {
	p := &fleetPoller{stopped: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for {
			select {
			case <-p.stopped:
				return
			case <-time.After(250 * time.Millisecond):
			}
			at := time.Now()
			offered, err := offeredNow(f.base.placement, f.rc)
			p.polls++
			if err != nil {
				p.seen = append(p.seen, offer{at, "poll failed: " + err.Error()})
			}
			f.mu.Lock()
			for u, since := range f.bad {
				if offered[u] && since.Before(at) {
					p.seen = append(p.seen, offer{at, u})
				}
			}
			f.mu.Unlock()
		}
	}()
	return p
}

// stop ends the poller and splits what it saw at the deadline.
func (p *fleetPoller) stop(deadline time.Time) (polls int, early, late []string) {
	close(p.stopped)
	<-p.done
	for _, o := range p.seen {
		s := fmt.Sprintf("%s at %s", o.node, o.at.Format("15:04:05.000"))
		if o.at.After(deadline) {
			late = append(late, s)
		} else {
			early = append(early, s)
		}
	}
	return p.polls, early, late
}

// checkFleet checks the whole fleet at rest: each node's provider owned
// by one live engine and offered as Ironic says, nothing else offered,
// no provider of a deleted node. The markers of two engines are two
// listings, not one read: a hand-over between them looks like a node
// with none, so the check is made again until it holds, for a minute.
func (f *fleetRig) checkFleet() {
	var problems []string
	for end := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Second) {
		if problems = f.atRest(); len(problems) == 0 || time.Now().After(end) {
			break
		}
	}
	for _, p := range problems[:min(len(problems), 20)] {
		f.t.Error(p)
	}
	offered, _ := offeredNow(f.base.placement, f.rc)
	f.t.Logf("FIGURE fleet at rest: providers owned %v, %d offered, %d changed", f.shares(), len(offered), len(f.state))
}

// atRest lists how the fleet differs from its state at rest.
func (f *fleetRig) atRest() []string {
	var out, all []string
	for i := range f.engines {
		if f.dead[i] {
			if n := len(f.owned(i)); n > 0 {
				out = append(out, fmt.Sprintf("%d providers still carry the marker of dead engine %d", n, i))
			}
			continue
		}
		all = append(all, f.owned(i)...)
	}
	offered, _ := offeredNow(f.base.placement, f.rc)
	moved, _ := offeredNow(f.base.placement, f.otherRC())
	var wantOwned, wantOffered, wantMoved int
	for _, u := range f.nodes {
		kind := f.state[u]
		n := count(all, u)
		if kind == "deleted" && n == 1 {
			if why := f.misplaced(u, kind); why != "" {
				out = append(out, fmt.Sprintf("node %s (deleted): %s", u, why))
			}
			wantOwned++ // reserved until proven gone twice
		} else if n != boolInt(kind != "deleted") {
			out = append(out, fmt.Sprintf("node %s (%q): %d live markers", u, kind, n))
		}
		good := kind == "" || kind == "returned"
		if offered[u] != good || moved[u] != (kind == "reclassed") {
			out = append(out, fmt.Sprintf("node %s (%q): offered as %s %v, as %s %v", u, kind, f.rc, offered[u], f.other, moved[u]))
		}
		wantOwned += boolInt(kind != "deleted")
		wantOffered += boolInt(good)
		wantMoved += boolInt(kind == "reclassed")
	}
	if len(all) != wantOwned || len(offered) != wantOffered || len(moved) != wantMoved {
		out = append(out, fmt.Sprintf("owned %d (want %d), offered %d (want %d), moved %d (want %d): providers beyond the fleet",
			len(all), wantOwned, len(offered), wantOffered, len(moved), wantMoved))
	}
	return out
}

func count(s []string, v string) int {
	n := 0
	for _, x := range s {
		n += boolInt(x == v)
	}
	return n
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// otherRC is Placement's name of the class changed nodes move to.
func (f *fleetRig) otherRC() string {
	return "CUSTOM_" + strings.ToUpper(strings.ReplaceAll(f.other, "-", "_"))
}

// fullyReserved: nothing of the provider can be allocated.
func fullyReserved(p providerView) bool {
	for _, inv := range p.Inventories {
		if inv.Reserved < inv.Total {
			return false
		}
	}
	return true
}

// linesSince is the log's lines stamped at or after from that contain one
// of words, for the test's output.
func linesSince(logPath string, from time.Time, words ...string) string {
	b, _ := os.ReadFile(logPath)
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		ts, _, ok := strings.Cut(strings.TrimPrefix(l, "time="), " ")
		at, err := time.Parse(time.RFC3339Nano, ts)
		if ok && err == nil && !at.Before(from) && slices.ContainsFunc(words, func(w string) bool { return strings.Contains(l, w) }) {
			out = append(out, l)
		}
	}
	return strings.Join(out[:min(len(out), 30)], "\n")
}

// keepLogs copies the engines' logs to $TMPDIR/rpengine-fleet-logs when
// RPENGINE_E2E_LOGS=1, for reading after the test's directories are gone.
func (f *fleetRig) keepLogs(phase string) {
	if os.Getenv("RPENGINE_E2E_LOGS") != "1" {
		return
	}
	dir := filepath.Join(os.TempDir(), "rpengine-fleet-logs")
	_ = os.MkdirAll(dir, 0o755)
	for i, e := range f.engines {
		b, _ := os.ReadFile(e.logPath)
		_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.log", strings.ReplaceAll(phase, " ", ""), i)), b, 0o644)
	}
}
