package soak

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/rpengine/rpengine/engine"
)

// Run soaks the engine for cfg.Cycles cycles (or until cfg.MaxDuration)
// and returns the report. An error means the harness itself failed; what
// the engine got wrong is in Report.Violations.
func Run(cfg Config) (*Report, error) {
	r, err := New(cfg)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Run()
}

// Run is the loop: evolve the world, plan the faults, run one cycle,
// check every invariant, restart the engine when the plan crashed it.
func (r *Runner) Run() (*Report, error) {
	start := time.Now()
	defer func() { r.rep.Duration = time.Since(start); r.finish() }()
	r.phaseLeft, r.quietRun, r.quietStart = r.cfg.QuietLen, 1, 1 // begin quiet: the cold start must converge
	for c := 1; c <= r.cfg.Cycles; c++ {
		if r.cfg.MaxDuration > 0 && time.Since(start) > r.cfg.MaxDuration {
			r.rep.StoppedEarly = fmt.Sprintf("time bound %v reached after %d cycles", r.cfg.MaxDuration, c-1)
			break
		}
		if err := r.step(c); err != nil {
			return r.rep, err
		}
		if r.cfg.Progress != nil && c%r.cfg.ProgressEvery == 0 {
			fmt.Fprintf(r.cfg.Progress, "soak: cycle %d/%d, %v, violations %d\n",
				c, r.cfg.Cycles, time.Since(start).Round(time.Second), r.rep.ViolationCount)
		}
	}
	return r.rep, nil
}

func (r *Runner) step(c int) error {
	quiet := r.beginStep(c)
	r.fake.ResetRequests()
	injected := make([]injectedFault, 0, len(r.plan.placement))
	for _, f := range r.plan.placement {
		injected = append(injected, injectedFault{f.kind, r.fake.Inject(f.fault)})
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.gate.arm(r.midCycleHook(r.plan))

	t0 := time.Now()
	rep, panicked := r.runCycle(ctx)
	r.rep.EngineTime += time.Since(t0)
	r.gate.drain() // requests the client gave up on, still being served

	cancel()
	r.gate.arm(nil)
	r.fake.ClearFaults()
	for _, in := range injected {
		r.rep.Fired[in.kind] += in.in.Fired()
	}
	struck := r.restarted != ""
	if !struck && r.plan.restart != "" && r.plan.restart != gracefulStop {
		// The cycle made fewer writes than the crash waited for: the
		// process dies after the cycle instead, before saving its state.
		r.restarted = r.plan.restart
	}
	crashed := r.restarted != "" && r.restarted != gracefulStop
	if crashed {
		r.gate.settle()
	}
	if r.cfg.Trace != "" {
		r.trace(r.cfg.Trace, "cycle done: quiet=%v restart=%q plan=%+v errors=%d", quiet, r.restarted,
			*r.plan, len(rep.Errors))
	}
	r.rep.Cycles++
	if quiet {
		r.rep.QuietCycles++
	}
	if len(rep.Errors) > 0 {
		r.rep.CyclesWithErrors++
	}
	t0 = time.Now()
	r.check(c, rep, panicked)
	r.rep.CheckTime += time.Since(t0)
	r.clearHostile()
	return r.afterCycle(crashed, struck)
}

// beginStep moves the world on to cycle c and plans its faults; it says
// whether the cycle is a quiet one.
func (r *Runner) beginStep(c int) (quiet bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cycle = c
	r.nextPhase()
	quiet = r.quietRun > 0
	if c > 1 {
		r.worldStep()
	}
	r.plan = r.planCycle(quiet)
	r.applyHostile()
	r.countPlan(r.plan)
	r.snapNodes, r.snapInstances, r.listedNodes, r.listedInstance = nil, nil, false, false
	r.confirmAsked, r.restarted, r.calls, r.landedBeforeNodesReturned = nil, "", nil, nil
	return quiet
}

type injectedFault struct {
	kind string
	in   interface{ Fired() int }
}

// runCycle runs one cycle; a panic is recovered and becomes a violation:
// the daemon must never exit.
func (r *Runner) runCycle(ctx context.Context) (rep engine.Report, panicked any) {
	defer func() {
		if x := recover(); x != nil {
			panicked = x
		}
	}()
	return r.eng.Cycle(ctx), nil
}

// midCycleHook strikes at the engine's n-th write: a crash, a graceful
// stop, or another writer.
func (r *Runner) midCycleHook(p *cyclePlan) func(n int) {
	return func(n int) {
		if p.restart != "" && p.restart != crashInListing && n == p.at {
			r.mu.Lock()
			r.restarted = p.restart
			r.mu.Unlock()
			if p.restart == gracefulStop {
				close(r.stop)
			} else {
				r.cancel()
			}
		}
		kind := p.writers[n]
		if kind == "" {
			return
		}
		r.midCycle(kind+"_mid_cycle", func() bool {
			if kind == "instance_lands" {
				return r.land(p.rng)
			}
			return r.otherWriter(kind, p.rng)
		})
	}
}

// afterCycle saves the state as the daemon does after each cycle, or
// restarts the engine the way the plan crashed or stopped it.
func (r *Runner) afterCycle(crashed, struck bool) error {
	switch {
	case r.restarted == "":
		r.save()
		return nil
	case !crashed: // graceful: the daemon saves on its way out
		r.save()
	case r.restarted == crashInListing: // before any write: nothing unsaved
	case r.restarted == crashLoseState:
		if err := os.Remove(r.statePath); err != nil && !os.IsNotExist(err) {
			return err
		}
		// With the file, the ownership record is gone: what the engine
		// added is no longer known to be its own, and a creation cut short
		// cannot be told from someone else's provider. Only this fault
		// excuses leftovers; a crash that keeps the file must leave none.
		for _, n := range r.w.nodes {
			for t := range n.traitsEver {
				add(r.tolerated, n.UUID, t)
			}
			r.recordLost[n.UUID] = true
		}
	}
	kind := r.restarted
	if !struck {
		kind += "_after_cycle"
	}
	r.rep.Restarts[kind]++
	return r.startEngine()
}

// save writes the state cache as the daemon does; a failure only costs
// reads later, but a cache that can never be saved is a bug.
func (r *Runner) save() {
	err := r.state.Save()
	r.mu.Lock()
	defer r.mu.Unlock()
	detail := ""
	if err != nil {
		detail = err.Error()
	}
	r.pass(invStateSaves, err == nil, r.cycle, "", detail, nil)
}

// nextPhase alternates chaos phases with quiet ones, in which no fault is
// injected and nothing happens during a cycle: after two of those,
// Placement must equal the desired state.
func (r *Runner) nextPhase() {
	if r.phaseLeft > 0 {
		r.phaseLeft--
		if r.quietRun > 0 && r.cycle > 1 {
			r.quietRun++
		}
		return
	}
	if r.quietRun > 0 {
		r.quietRun, r.phaseLeft = 0, 3+r.phases.IntN(14)
	} else {
		r.quietRun, r.quietStart, r.phaseLeft = 1, r.cycle, r.cfg.QuietLen-1
	}
}

// applyHostile garbles a few nodes' records for this cycle.
func (r *Runner) applyHostile() {
	p := r.plan
	for range p.hostile {
		if n := r.w.pickWith(p.rng, func(n *wnode) bool { return n.enrolled && n.hostile == "" }); n != nil {
			n.hostile = p.hostileKind
			r.rep.Faults["source_hostile_"+n.hostile]++
		}
	}
}

func (r *Runner) clearHostile() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.w.nodes {
		n.hostile = ""
	}
}
