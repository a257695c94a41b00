package engine

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpengine/rpengine/engine/placement"
)

// Report says what one cycle did. Errors holds one entry per failure; a
// cycle with no errors left Placement matching the desired state.
// Outcomes says, node by node, what the cycle did. The JSON form is
// versioned (ReportSchema) and documented in docs/REPORT.md.
type Report struct {
	Schema      int `json:"schema_version"`
	Nodes       int `json:"nodes"`
	Instances   int `json:"instances"`
	Created     int `json:"created"`
	Updated     int `json:"updated"`
	Unchanged   int `json:"unchanged"`
	Deleted     int `json:"deleted"`
	Quarantined int `json:"quarantined"`
	Conflicts   int `json:"conflicts"`
	// Failed counts providers whose sync failed this cycle.
	Failed int     `json:"failed"`
	Errors []Error `json:"errors"`
	// Warnings are conditions that do not fail the cycle but leave
	// Placement short of the desired state, e.g. traits it does not know.
	Warnings []string `json:"warnings,omitempty"`
	// Blocked counts providers of nodes proven gone that could not be
	// deleted this cycle; each is fully reserved instead (deletion.go).
	Blocked int `json:"deletions_blocked,omitempty"`
	// Reserved counts desired providers by ReservedReason, "schedulable"
	// for those with none.
	Reserved          map[string]int `json:"reserved_by_reason,omitempty"`
	PlacementRequests int64          `json:"placement_requests"`
	DurationMS        int64          `json:"duration_ms"`
	// PluginMS is the time spent in plugin calls, PlacementMS in the
	// phases that talk to Placement (the provider listing, the syncs and
	// the deletions, less the plugin's proofs); the rest is the engine's.
	PluginMS    int64         `json:"plugin_ms"`
	PlacementMS int64         `json:"placement_ms"`
	Writes      []Write       `json:"writes,omitempty"`
	Outcomes    []Outcome     `json:"outcomes"`
	proofTime   time.Duration // in confirm_deleted: plugin time within the Placement phases
	budgetWaits int           // providers whose write waits for the budget of new names

	// ForeignRewrites counts providers whose values another writer changed
	// since the engine last saw them (foreign.go); Nova is beside-nova mode.
	ForeignRewrites int `json:"foreign_rewrites"`
	// ChangesOmitted counts outcomes past the first MaxChangeLists of a
	// cycle (not a plan) whose changes were left out: a cold run creating
	// 100,000 providers kept 43 MB of them.
	ChangesOmitted int64       `json:"changes_omitted,omitempty"`
	Nova           *NovaReport `json:"nova,omitempty"`
}

// maxErrorLines bounds Report.Errors: past it, one line counts the rest,
// so a plugin's million bad nodes make a report of a few KiB.
const maxErrorLines = 50

// capErrors keeps the first maxErrorLines errors, each cut to 1 KiB.
func (r *Report) capErrors() {
	if n := len(r.Errors); n > maxErrorLines {
		more := Error{Kind: r.Errors[maxErrorLines].Kind, Message: fmt.Sprintf("... and %d more errors", n-maxErrorLines)}
		r.Errors = append(r.Errors[:maxErrorLines:maxErrorLines], more)
	}
	for i, e := range r.Errors {
		if len(e.Message) > 1024 {
			r.Errors[i].Message = fmt.Sprintf("%s... (%d bytes)", e.Message[:1024], len(e.Message))
		}
	}
}

// Cycle runs one reconcile: nodes, then instances, then one listing of
// Placement, then the writes. With dry set it plans and writes nothing.
func (e *Engine) Cycle(ctx context.Context, dry bool) (r Report) {
	start := time.Now()
	r = Report{Schema: ReportSchema, Errors: []Error{}}
	e.results.take()
	e.dry = dry
	e.emit(CycleStarted{At: start, Dry: dry})
	var round int64 // dry runs count no cycle: they record no proof
	if !dry {
		var pending bool
		if round, pending = e.state.nextRound(); pending {
			if err := e.state.Save(); err != nil {
				e.log.Warn("state cache not saved before the cycle", "err", err)
			}
		}
	} else {
		round = e.state.peekRound() + 1
	}
	e.pc.BeginCycle()
	defer func() {
		r.capErrors()
		now := e.pc.Requests()
		r.PlacementRequests, e.counted = now-e.counted, now
		r.DurationMS = time.Since(start).Milliseconds()
		e.state.setMicroversion(e.pc.Microversion())
		if u := e.pc.Unknown(); len(u) > 0 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%d standard traits unknown to this Placement left out (upgrade Placement to know them): %s",
				len(u), strings.Join(u[:min(len(u), 10)], ", ")))
		}
		r.Outcomes = e.results.take()
		r.ChangesOmitted = max(0, e.changeLists.Swap(0)-MaxChangeLists)
		e.emit(CycleFinished{Report: r})
	}()
	if e.pc.Stale() {
		if err := e.pc.Renegotiate(ctx); err != nil {
			r.fail(ErrListing, "", fmt.Sprintf("placement refused the recorded microversion: %v; no writes this cycle", err))
			return r
		}
	}

	// 1. Nodes first: the slow snapshot. A failed listing ends the cycle
	// before any write, so absence can never look like deletion.
	t := time.Now()
	nodes, err := e.src.ListNodes(ctx, e.pol.Scope.Request())
	e.listed(&r, "nodes", len(nodes), t, err, nodes)
	if err != nil {
		r.fail(ErrListing, "", fmt.Sprintf("list nodes: %v; no writes this cycle", err))
		return r
	}
	if !dry {
		e.forgetProofs(nodes) // a node listed again is not gone
	}
	// 2. Instances second, so any consumer that landed during the node
	// listing is in this list.
	t = time.Now()
	instances, err := e.src.ListInstances(ctx)
	e.listed(&r, "instances", len(instances), t, err, nil)
	if err != nil {
		r.fail(ErrListing, "", fmt.Sprintf("list instances: %v; no writes this cycle", err))
		return r
	}
	r.Nodes, r.Instances = len(nodes), len(instances)

	desired, problems := DesiredState(nodes, instances, e.pol)
	e.results.reserve(len(desired) + len(problems))
	for i, d := range desired { // traits Placement lacks are neither sent nor recorded
		if slices.ContainsFunc(d.Traits, e.pc.KnownUnknown) { // shared slices: clone first
			desired[i].Traits = slices.DeleteFunc(slices.Clone(d.Traits), e.pc.KnownUnknown)
		}
	}
	r.Reserved = map[string]int{}
	for _, d := range desired {
		r.Reserved[reservedKey(d.Reserved)]++
	}
	for _, p := range problems {
		e.problem(&r, p)
	}

	// 3. One request tells which of our providers changed since last seen.
	t = time.Now()
	defer func(t time.Time) { r.placementTime(t, r.proofTime) }(t)
	listed, err := e.listOwned(ctx)
	e.listed(&r, "providers", len(listed), t, err, nil)
	if err != nil {
		r.fail(ErrListing, "", fmt.Sprintf("list providers: %v; no writes this cycle", err))
		return r
	}
	e.beginQuiet(ctx, listed)

	// 4. Before the first write, the ownership record must hold all this
	// cycle may add or create (record.go), on disk.
	if !dry {
		if e.state.intend(desired, listed) {
			if err := e.state.Save(); err != nil {
				r.fail(ErrState, "", fmt.Sprintf("record ownership before writing: %v; no writes this cycle", err))
				return r
			}
		}
		e.claimOrphans(ctx, desired, listed, &r)
	}

	// 5. Write only real differences, in parallel, bounded.
	e.syncAll(ctx, desired, listed, dry, &r)
	if w := e.pc.Waiting(); w != "" {
		r.fail(ErrDeferred, "", fmt.Sprintf("%s; %d providers wait with them", w, r.budgetWaits))
	}
	r.ForeignRewrites = int(e.foreign.Swap(0))
	if e.pol.Nova.Enabled && !stopping(e.opts.Stop) {
		e.syncHolds(ctx, nodes, desired, listed, dry, &r)
	}

	// 6. Providers whose node is no longer listed: deleted only on proof.
	if !stopping(e.opts.Stop) {
		e.reapVanished(ctx, nodes, desired, listed, round, dry, &r)
	}
	return r
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
func (e *Engine) listOwned(ctx context.Context) (map[string]placement.Generation, error) {
	out, err := e.pc.ProviderGenerations(ctx, url.Values{"required": {e.pol.OwnerTrait}}, e.state.size())
	var api *placement.APIError
	if errors.As(err, &api) && api.Status == 400 && strings.Contains(api.Detail, "No such trait") {
		return map[string]placement.Generation{}, nil
	}
	return out, err
}

func (e *Engine) syncAll(ctx context.Context, desired []Desired, listed map[string]placement.Generation, dry bool, r *Report) {
	var mu sync.Mutex
	done := 0
	// Workers take the next provider by index, not from a channel fed one
	// by one: at 100,000 providers the hand-offs were a tenth of an idle
	// cycle. Stopping hands the rest over in one piece, as deferred.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range e.opts.Concurrency {
		wg.Go(func() {
			for {
				if stopping(e.opts.Stop) {
					if i := int(next.Swap(int64(len(desired)))); i < len(desired) {
						mu.Lock()
						r.fail(ErrDeferred, "", fmt.Sprintf("stopping: %d of %d providers not synced this cycle", len(desired)-i, len(desired)))
						mu.Unlock()
						e.deferred(desired[i:])
					}
					return
				}
				i := int(next.Add(1) - 1)
				if i >= len(desired) {
					return
				}
				d := desired[i]
				res, ws, conflicts, err := e.syncOne(ctx, d, listed[d.UUID], dry)
				if err != nil {
					e.failed(d, err)
				}
				mu.Lock()
				r.tally(d.UUID, res, ws, conflicts, err, dry)
				done++
				if e.opts.Progress != nil {
					e.opts.Progress(done, len(desired))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

func (r *Report) tally(node string, res outcome, ws []Write, conflicts int, err error, dry bool) {
	r.Conflicts += conflicts
	if errors.Is(err, placement.ErrWriteBudget) { // one line for all of them, at the end of the cycle
		r.budgetWaits++
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
	if dry {
		r.Writes = append(r.Writes, ws...)
	}
}
