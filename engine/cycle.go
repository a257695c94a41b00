package engine

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/rpengine/rpengine/engine/placement"
)

// Report says what one cycle did. Errors holds one line per failure; a
// cycle with no errors left Placement matching the desired state.
type Report struct {
	Nodes       int      `json:"nodes"`
	Instances   int      `json:"instances"`
	Created     int      `json:"created"`
	Updated     int      `json:"updated"`
	Unchanged   int      `json:"unchanged"`
	Deleted     int      `json:"deleted"`
	Quarantined int      `json:"quarantined"`
	Conflicts   int      `json:"conflicts"`
	Errors      []string `json:"errors"`
	// Reserved counts desired providers by ReservedReason ("" = schedulable).
	Reserved          map[string]int `json:"reserved_by_reason,omitempty"`
	PlacementRequests int64          `json:"placement_requests"`
	DurationMS        int64          `json:"duration_ms"`
	Writes            []Write        `json:"writes,omitempty"`
	// ForeignRewrites counts providers whose values another writer changed
	// since the engine last saw them (foreign.go); Nova is beside-nova mode.
	ForeignRewrites int         `json:"foreign_rewrites"`
	Nova            *NovaReport `json:"nova,omitempty"`
}

// Cycle runs one reconcile: nodes, then instances, then one listing of
// Placement, then the writes. With dry set it plans and writes nothing.
func (e *Engine) Cycle(ctx context.Context, dry bool) (r Report) {
	start, reqs := time.Now(), e.pc.Requests()
	r = Report{Errors: []string{}}
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
	defer func() {
		r.PlacementRequests = e.pc.Requests() - reqs
		r.DurationMS = time.Since(start).Milliseconds()
	}()

	// 1. Nodes first: the slow snapshot. A failed listing ends the cycle
	// before any write, so absence can never look like deletion.
	nodes, err := e.src.ListNodes(ctx, e.pol.Scope.Request())
	if err != nil {
		r.Errors = append(r.Errors, fmt.Sprintf("list nodes: %v; no writes this cycle", err))
		return r
	}
	if !dry {
		e.forgetProofs(nodes) // a node listed again is not gone
	}
	// 2. Instances second, so any consumer that landed during the node
	// listing is in this list.
	instances, err := e.src.ListInstances(ctx)
	if err != nil {
		r.Errors = append(r.Errors, fmt.Sprintf("list instances: %v; no writes this cycle", err))
		return r
	}
	r.Nodes, r.Instances = len(nodes), len(instances)

	desired, problems := DesiredState(nodes, instances, e.pol)
	r.Reserved = map[string]int{}
	for _, d := range desired {
		r.Reserved[string(d.Reserved)]++
	}
	for _, p := range problems {
		r.Quarantined++
		r.Errors = append(r.Errors, p.String())
	}

	// 3. One request tells which of our providers changed since last seen.
	listed, err := e.listOwned(ctx)
	if err != nil {
		r.Errors = append(r.Errors, fmt.Sprintf("list providers: %v; no writes this cycle", err))
		return r
	}

	// 4. Write only real differences, in parallel, bounded.
	e.syncAll(ctx, desired, listed, dry, &r)
	r.ForeignRewrites = int(e.foreign.Swap(0))
	if e.pol.Nova.Enabled && !stopping(e.opts.Stop) {
		e.syncHolds(ctx, nodes, desired, listed, dry, &r)
	}

	// 5. Providers whose node is no longer listed: deleted only on proof.
	if !stopping(e.opts.Stop) {
		e.reapVanished(ctx, nodes, listed, round, dry, &r)
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
	ps, err := e.pc.ListProviders(ctx, url.Values{"required": {e.pol.OwnerTrait}})
	var api *placement.APIError
	if errors.As(err, &api) && api.Status == 400 && strings.Contains(api.Detail, "No such trait") {
		return map[string]placement.Generation{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := make(map[string]placement.Generation, len(ps))
	for _, p := range ps {
		out[p.UUID] = p.Generation
	}
	return out, nil
}

func (e *Engine) syncAll(ctx context.Context, desired []Desired, listed map[string]placement.Generation, dry bool, r *Report) {
	var mu sync.Mutex
	done := 0
	work := make(chan Desired)
	var wg sync.WaitGroup
	for range e.opts.Concurrency {
		wg.Go(func() {
			for d := range work {
				res, ws, conflicts, err := e.syncOne(ctx, d, listed[d.UUID], dry)
				mu.Lock()
				r.tally(res, ws, conflicts, err, dry)
				done++
				if e.opts.Progress != nil {
					e.opts.Progress(done, len(desired))
				}
				mu.Unlock()
			}
		})
	}
	for i, d := range desired {
		// Checked first: when both are ready, select picks at random.
		if !stopping(e.opts.Stop) {
			select {
			case work <- d:
				continue
			case <-e.opts.Stop:
			}
		}
		mu.Lock()
		r.Errors = append(r.Errors, fmt.Sprintf("stopping: %d of %d providers not synced this cycle", len(desired)-i, len(desired)))
		mu.Unlock()
		break
	}
	close(work)
	wg.Wait()
}

func (r *Report) tally(res outcome, ws []Write, conflicts int, err error, dry bool) {
	r.Conflicts += conflicts
	if err != nil {
		r.Errors = append(r.Errors, err.Error())
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
