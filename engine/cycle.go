package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpengine/rpengine/engine/internal/record"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
)

// cycle is one reconcile and everything it owns: where its writes go,
// the state they update, and what it has done so far. Engine keeps only
// what outlives a cycle. Its steps (sweep, steps.go) are observe (the source), own
// (our providers and the ownership record), syncAll (per provider:
// observe, own, plan, apply, classify; sync.go), holds and reap.
type cycle struct {
	e   *Engine
	rec *record.Keeper // the engine's ownership record, or a plan's view of it
	w   record.Writer  // from rec.Intend (own): nil until the record holds the intent
	log *slog.Logger   // the engine's; a plan's discards
	dry bool           // a plan: told to the observers
	// strangers: an observe plan, which also reports the providers of
	// unlisted nodes no engine owns (strangers.go).
	strangers bool
	state     *State // the engine's, or a plan's copy
	names     *nameBook
	holds     *holdBook
	rooms     map[string]map[string]placement.Generation // room listings by hold class, this cycle (roomFor)
	quiet     *quiet                                     // the engine's, or a plan's copy (quiet.go)
	others    others                                     // other owners' providers listed this cycle (takeover.go)
	budget    budget                                     // of new names
	round     int64                                      // for consecutive deletion proofs (proof.go)
	start     time.Time

	mu      sync.Mutex // guards r while the syncs run
	r       Report
	results outcomes
	foreign atomic.Int64 // rewrites of our values by another writer (foreign.go)
	// flipsFrom is when this take-over's marker flips began (UnixNano, 0:
	// not yet; takeover.go).
	flipsFrom atomic.Int64
	// placementFrom starts the Placement phases; proofTime is the
	// plugin's time within them.
	placementFrom time.Time
	proofTime     time.Duration
	budgetWaits   int       // providers whose write waits for the budget of new names
	problems      []Problem // the nodes DesiredState left out, or partly
	// gens is each desired provider's generation in the listing, by index
	// ("" if not listed), or nil: one probe of the listing per provider
	// (intend) instead of three.
	gens []placement.Generation
	// settled says, by index, which desired providers intend found as the
	// sync would leave them (isSettled), or is nil; settledAt is the
	// state's write count then: any write before the syncs voids it.
	settled     []bool
	settledAt   int64
	spare       *spareLists     // this cycle's desired list and node order (desired.go)
	changeLists atomic.Int64    // outcomes with changes so far (outcome.go)
	left        map[string]bool // providers of nodes that left the scope, reserved (reserveLeft)
	ready       []string        // providers of nodes proven gone, to delete after the syncs (deletion.go)
	whole       bool            // a full cycle (order.go)
	leave       func()          // releases the write gate (order.go), nil when not held
	newer       atomic.Int64    // providers left to a newer node sync (order.go)
	outran      bool            // a later full cycle wrote first: this run wrote nothing (order.go)
}

// Cycle runs one reconcile: nodes, then instances, then one listing of
// Placement, then the writes.
func (e *Engine) Cycle(ctx context.Context) Report {
	return e.newCycle().run(ctx, fullRun)
}

// Plan runs the same reconcile over a copy of the engine's state and
// records the writes instead of sending them: Placement is read, never
// written, and the engine is left as it was. Report.Writes and each
// Outcome's Writes say what Cycle would write.
func (e *Engine) Plan(ctx context.Context) Report {
	return e.newPlan().run(ctx, fullRun)
}

// newCycle is a run over the engine's own state and record.
func (e *Engine) newCycle() *cycle {
	return &cycle{e: e, rec: e.rec, log: e.log, state: e.state, names: e.names, holds: &e.holds, quiet: &e.quiet,
		budget: budget{limit: e.opts.NewNames}, start: time.Now(), r: Report{Schema: ReportSchema, Errors: []Error{}}}
}

// newPlan is a run over copies, whose record hands out a recording writer.
func (e *Engine) newPlan() *cycle {
	c := e.newCycle()
	c.state, c.names, c.holds, c.quiet = e.state.clone(), e.names.clone(), e.holds.clone(), e.quiet.clone()
	c.rec, c.log, c.dry = e.rec.ForPlan(e.ledger(c.state)), slog.New(slog.DiscardHandler), true
	return c
}

func (c *cycle) run(ctx context.Context, r run) Report {
	c.e.emit(CycleStarted{At: c.start, Plan: c.dry, Observe: c.strangers})
	defer c.release()
	c.sweep(ctx, r)
	return c.finish()
}

// countRound numbers the cycle for the deletion proofs (proof.go).
func (c *cycle) countRound() {
	var pending bool
	if c.round, pending = c.state.nextRound(); pending {
		if err := c.rec.Save(); err != nil {
			c.e.log.Warn("state cache not saved before the cycle", "err", err)
		}
	}
}

// negotiated makes sure Placement takes the recorded microversion.
func (c *cycle) negotiated(ctx context.Context) bool {
	if c.e.pc.Stale() {
		if err := c.e.pc.Renegotiate(ctx); err != nil {
			c.fail(ErrListing, "", fmt.Sprintf("placement refused the recorded microversion: %v; no writes this cycle", err))
			return false
		}
	}
	return true
}

// observe lists the nodes, then the instances (so any consumer that landed
// during the node listing is in this list), and derives the desired
// providers. A failed listing ends the cycle before any write, so absence
// can never look like deletion.
func (c *cycle) observe(ctx context.Context, req hostabi.ListNodesRequest) (listedNodes, []Desired, bool) {
	t := time.Now()
	nodes, err := c.e.src.ListNodes(ctx, req)
	c.listed("nodes", len(nodes), t, err, nodes)
	if err != nil {
		c.fail(ErrListing, "", fmt.Sprintf("list nodes: %v; no writes this cycle", err))
		return listedNodes{}, nil, false
	}
	c.forgetProofs(nodes) // a node listed again is not gone
	t = time.Now()
	instances, err := c.e.src.ListInstances(ctx)
	c.listed("instances", len(instances), t, err, nil)
	if err != nil {
		c.fail(ErrListing, "", fmt.Sprintf("list instances: %v; no writes this cycle", err))
		return listedNodes{}, nil, false
	}
	c.r.Nodes, c.r.Instances = len(nodes), len(instances)
	c.spare = c.e.spare.take()
	desired, problems := desiredState(nodes, instances, c.e.pol, c.spare)
	c.results.reserve(len(desired) + len(problems))
	c.takeDesired(desired, problems)
	return listedWith(nodes, c.spare.keys, c.e.pol), desired, true
}

// takeDesired drops the traits Placement lacks from desired (they are
// neither sent nor recorded), counts the reservations and reports the
// nodes DesiredState left out.
func (c *cycle) takeDesired(desired []Desired, problems []Problem) {
	if c.names.anyUnknown() { // none to drop, the usual case: no lock and lookup per trait
		for i, d := range desired {
			if slices.ContainsFunc(d.Traits, c.names.isUnknown) { // shared slices: clone first
				desired[i].Traits = slices.DeleteFunc(slices.Clone(d.Traits), c.names.isUnknown)
			}
		}
	}
	c.r.Reserved = map[string]int{}
	for _, d := range desired {
		c.r.Reserved[reservedKey(d.Reserved)]++
	}
	for _, p := range problems {
		c.problem(p)
	}
	c.problems = problems
}

// finish completes the report and tells the observers.
func (c *cycle) finish() Report {
	r := &c.r
	if !c.placementFrom.IsZero() {
		r.PlacementMS = (time.Since(c.placementFrom) - c.proofTime).Milliseconds()
	}
	r.capErrors()
	r.PlacementRequests = c.e.pc.TakeRequests()
	r.DurationMS = time.Since(c.start).Milliseconds()
	c.e.state.setMicroversion(c.e.pc.Microversion())
	if u := c.names.unknownList(); len(u) > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d standard traits unknown to this Placement left out (upgrade Placement to know them): %s",
			len(u), strings.Join(u[:min(len(u), 10)], ", ")))
	}
	if c.w != nil {
		r.Writes = c.w.All() // a plan's; nil when they were sent
	}
	r.Outcomes = c.results.take()
	r.ChangesOmitted = max(0, c.changeLists.Load()-MaxChangeLists)
	c.e.emit(CycleFinished{Report: *r})
	return *r
}

// fail records one error; safe from the sync workers.
func (c *cycle) fail(kind ErrorKind, node, msg string) {
	c.mu.Lock()
	c.r.fail(kind, node, msg)
	c.mu.Unlock()
}

// stopping says whether stop is closed; a nil channel never is.
func stopping(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// listOwned lists the providers carrying this engine's owner marker, with
// their generations. Placement answers 400 if the marker trait does not
// exist yet, which means no provider carries it.
func (c *cycle) listOwned(ctx context.Context) (map[string]placement.Generation, error) {
	out, err := c.e.pc.ProviderGenerations(ctx, url.Values{"required": {c.e.pol.OwnerTrait}}, c.state.size())
	var api *placement.APIError
	if errors.As(err, &api) && api.Status == 400 && strings.Contains(api.Detail, "No such trait") {
		return map[string]placement.Generation{}, nil
	}
	if err != nil {
		return nil, err
	}
	return out, c.keepShare(out) // fleet.go
}

// syncAll writes only real differences, in parallel, bounded.
func (c *cycle) syncAll(ctx context.Context, desired []Desired, listed map[string]placement.Generation) {
	if c.settled != nil && c.state.writeCount() != c.settledAt {
		c.settled = nil // written since intend judged the entries: judge afresh
	}
	// Workers take the next provider by index, not from a channel fed one
	// by one: at 100,000 providers the hand-offs were a tenth of an idle
	// cycle. Stopping hands the rest over in one piece, as deferred.
	urgent, flips := c.urgentFirst(desired) // takeover.go; nil: desired's order
	done := 0
	order, flips := c.settledFirst(ctx, desired, listed, urgent, flips, &done) // settledfirst.go
	n := len(desired)
	if order != nil {
		n = len(order)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range c.e.opts.Concurrency {
		wg.Go(func() {
			for {
				if why, kind := c.halted(); why != "" { // halt.go
					if i := int(next.Swap(int64(n))); i < n {
						c.fail(kind, "", fmt.Sprintf("%s: %d of %d providers not synced this cycle", why, n-i, len(desired)))
						c.deferred(inOrder(desired, order, i), why)
					}
					return
				}
				i := int(next.Add(1) - 1)
				if i >= n || i >= flips && c.yieldFlips(i, n, &next) {
					return
				}
				i = at(order, i) // settledfirst.go
				d := desired[i]
				res, conflicts, err := c.syncAt(ctx, i, d, listed)
				c.counted(d, res, conflicts, err, &done, len(desired))
			}
		})
	}
	wg.Wait()
	c.flipsDone(urgent) // takeover.go
	if w := c.budget.summary(); w != "" {
		c.fail(ErrDeferred, "", fmt.Sprintf("%s; %d providers wait with them", w, c.budgetWaits))
	}
	c.r.ForeignRewrites = int(c.foreign.Swap(0))
	c.r.LeftToNodeSyncs = int(c.newer.Swap(0))
}

// counted records one provider's sync in the report: its outcome if it
// failed, the tally and the progress.
func (c *cycle) counted(d Desired, res outcome, conflicts int, err error, done *int, total int) {
	if err != nil {
		c.failed(d, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tally(d.UUID, res, conflicts, err)
	*done++
	if c.e.opts.Progress != nil {
		c.e.opts.Progress(*done, total)
	}
}

// syncAt syncs desired provider i, d.
func (c *cycle) syncAt(ctx context.Context, i int, d Desired, listed map[string]placement.Generation) (outcome, int, error) {
	if c.newerThanCycle(d.UUID) {
		c.newer.Add(1)
		return unchanged, 0, nil
	}
	if c.leavePaused(d) {
		return unchanged, 0, nil
	}
	if c.settled != nil && c.settled[i] {
		return c.syncSettled(d)
	}
	return c.syncOne(ctx, d, c.listedGen(i, d, listed))
}

// listedGen is desired provider i's listed generation ("" if not listed).
func (c *cycle) listedGen(i int, d Desired, listed map[string]placement.Generation) placement.Generation {
	if c.gens != nil {
		return c.gens[i]
	}
	return listed[d.UUID]
}

// tally counts one provider's sync; the caller holds c.mu.
func (c *cycle) tally(node string, res outcome, conflicts int, err error) {
	r := &c.r
	r.Conflicts += conflicts
	if errors.Is(err, ErrNameBudget) { // one line for all of them, at the end of the cycle
		c.budgetWaits++
		return
	}
	if err != nil {
		r.Failed++
		_, kind, _ := classify(err)
		r.fail(kind, node, err.Error())
		return
	}
	switch res {
	case created:
		r.Created++
	case updated:
		r.Updated++
	default:
		r.Unchanged++
	}
}
