package e2e

import (
	"slices"
	"syscall"
	"testing"
	"time"
)

// An operator's pause of one node, against a real etcd and the real
// Placement with two engines: paused on its owner (`engine pause`), the
// operator's change to its provider stays through that engine's cycles,
// its kill -9 and the other's take-over (which writes nothing to it, not
// even its marker), and the taker's restart; `engine resume` on the taker
// brings the rules back within two intervals, under the taker's marker.
func TestPauseSurvivesTakeOverAndRestartE2E(t *testing.T) {
	r := newScaleRig(t, 0x5ca1e5)
	r.metrics = map[string]string{}
	a, b := r.id(1), r.id(2)
	r.start(1)
	r.start(2)
	r.waitSettled(30*time.Second, a, b)
	r.waitQuiet()
	var mine []string
	for u, o := range r.owners(a, b) {
		if slices.Equal(o, []string{a}) {
			mine = append(mine, u)
		}
	}
	if len(mine) == 0 {
		t.Fatalf("%s owns nothing", a)
	}
	slices.Sort(mine)
	u := mine[0]
	if res := runEngine(t, "pause", u, "--for", "2h", "--reason", "e2e: an operator's fix", "--config", r.engines[a].cfg); res.code != 0 {
		t.Fatalf("pause: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	paused := time.Now()
	fix := r.operatorFix(u)
	r.cycles(a, 2)
	r.kill(1)
	r.within(3*soInterval, "every other node of the dead engine taken over", func() bool {
		owners := r.owners(a, b)
		for _, m := range mine[1:] {
			if !slices.Equal(owners[m], []string{b}) {
				return false
			}
		}
		return true
	})
	r.cycles(b, 3)
	r.engines[b].cmd.Process.Signal(syscall.SIGTERM)
	<-r.engines[b].exited
	r.start(2)
	r.cycles(b, 2)
	for _, id := range []string{a, b} {
		for _, w := range r.log.writesBy(id, paused) {
			if w.provider == u {
				t.Errorf("%s wrote the paused provider: %s %s", id, w.method, w.path)
			}
		}
	}
	if got := r.reservedOf(u); got != fix {
		t.Fatalf("the operator's reserved %d on the paused provider became %d", fix, got)
	}
	if o := r.owners(a, b)[u]; !slices.Equal(o, []string{a}) {
		t.Fatalf("the paused provider's marker became %v: nothing was to be written to it", o)
	}
	if res := runEngine(t, "resume", u, "--config", r.engines[b].cfg); res.code != 0 {
		t.Fatalf("resume on the taker: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	want := r.desiredReserved(u)
	took := r.within(2*soInterval+5*time.Second, "the rules back on the resumed provider, under the taker's marker", func() bool {
		return r.reservedOf(u) == want && slices.Equal(r.owners(a, b)[u], []string{b})
	})
	t.Logf("FIGURE pause: the operator's fix kept through 2 cycles of its owner, its kill -9, the take-over, 3 cycles and a restart of the taker; resumed on the taker: the rules back %.1f s later", took.Seconds())
}

// operatorFix changes provider u's reserved count behind the engines'
// backs (0 to total, or total to 0) and returns the new value.
func (r *scaleRig) operatorFix(u string) int64 {
	p, _ := readProvider(r.t, r.placement, u)
	var rp struct{ Generation int }
	placementGet(r.t, r.placement, "/resource_providers/"+u, &rp)
	invs := map[string]any{}
	var fix int64
	for rc, inv := range p.Inventories {
		fix = inv.Total - inv.Reserved
		invs[rc] = map[string]any{"total": inv.Total, "reserved": fix, "min_unit": inv.MinUnit, "max_unit": inv.MaxUnit,
			"step_size": inv.StepSize, "allocation_ratio": inv.AllocationRatio}
		break // the fake plugin's nodes have one class
	}
	body := map[string]any{"resource_provider_generation": rp.Generation, "inventories": invs}
	if code, b := placementDo(r.t, r.placement, "PUT", "/resource_providers/"+u+"/inventories", body); code != 200 {
		r.t.Fatalf("operator's fix on %s: %d %s", u, code, b)
	}
	return fix
}

func (r *scaleRig) reservedOf(u string) int64 { return reservedIn(r.t, r.placement, u) }

func (r *scaleRig) desiredReserved(u string) int64 {
	for _, inv := range r.desired[u] {
		return inv.Reserved
	}
	return -1
}

// cycles waits for n more finished cycles of engine id.
func (r *scaleRig) cycles(id string, n int) {
	r.t.Helper()
	moreCycles(r.t, r.metrics[id], "rpengine_cycles_total", n, time.Duration(n+2)*soInterval)
}

// within is within for the rig's test.
func (r *scaleRig) within(bound time.Duration, what string, cond func() bool) time.Duration {
	r.t.Helper()
	return within(r.t, bound, what, cond)
}
