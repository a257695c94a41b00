package soak

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// Invariant names, as counted in the report.
const (
	invNoPanic          = "cycle returns, never panics"
	invOpaqueGens       = "no generation sent that the server did not hand out"
	invNoAllocWrites    = "no engine request under /allocations, no DELETE of inventories"
	invDeleteProof      = "provider deleted only when its node is gone >= 2 cycles"
	invCreateListed     = "provider created only for a listed, in-scope node"
	invInventoryInputs  = "inventory written matches this cycle's listings"
	invForeignUntouched = "other managers' providers never requested"
	invAllocsIntact     = "allocations intact"
	invForeignSurvive   = "foreign traits and aggregates survive"
	invNoStrayProvider  = "no provider for a node never in scope"
	invNoMissing        = "no provider of an in-scope node missing after faults stop"
	invConverged        = "Placement equals the desired state after two quiet cycles"
	invReaped           = "providers of deleted nodes reaped after faults stop"
	invQuietClean       = "quiet cycles report no errors"
	invStateSaves       = "the state cache can be saved after every cycle"
	invOrder            = "nodes listed before instances; every instance landed by then is seen"
	invNoLeftovers      = "no stray trait or unmarked provider, crashes (kill -9) included"
)

// check runs every invariant on one finished cycle. Request-log checks
// first, since they tell which providers were deleted on purpose.
func (r *Runner) check(c int, rep engine.Report, panicked any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pass(invNoPanic, panicked == nil, c, "", fmt.Sprintf("cycle panicked: %v", panicked), nil)
	log := r.fake.Requests()
	want := r.pol.expectations(r.snapNodes, r.snapInstances)
	if !r.listedInstance {
		want = nil // no desired state this cycle: the engine may write nothing
	}
	r.checkOrder(c)
	vanishedNow := r.checkLog(c, log, want)
	ps := r.providers()
	r.forgetVanished(vanishedNow, ps)
	r.checkState(c, ps, log)
	r.checkDoubts(c, rep, ps, want, log) // doubt_checks.go
	if r.quietRun > 0 && disturbed(rep.ErrorMessages()) {
		// The machine, not a fault, made a request overrun its time
		// limit (a loaded CI host): the quiet phase starts over, so
		// convergence is still demanded, two cycles later.
		r.rep.Disturbed++
		r.quietRun, r.quietStart, r.phaseLeft = 1, c+1, max(r.phaseLeft, 1)
		return
	}
	if r.quietRun >= 2 {
		r.checkConverged(c, ps, want, log)
		r.pass(invQuietClean, len(rep.Errors) == 0, c, "", fmt.Sprintf("quiet cycle %d errors: %q", r.quietRun, rep.Errors), nil)
	}
}

// disturbed says whether errors include a time limit hit (Placement
// client or plugin call), which in a quiet cycle only load can cause.
func disturbed(errs []string) bool {
	return slices.ContainsFunc(errs, func(e string) bool {
		return strings.Contains(e, "Client.Timeout") || strings.Contains(e, "context deadline exceeded") || strings.Contains(e, "exceeded the time limit")
	})
}

// checkOrder: the race nova lost providers to. An instance that landed
// while the nodes were being listed must be in the instance listing.
func (r *Runner) checkOrder(c int) {
	if len(r.calls) == 0 {
		return
	}
	r.pass(invOrder, r.calls[0] == "nodes", c, "", fmt.Sprintf("source calls in order %v", r.calls), nil)
	if !r.listedInstance {
		return
	}
	seen := map[string]bool{}
	for _, in := range r.snapInstances {
		seen[in.UUID] = true
	}
	for _, in := range r.landedBeforeNodesReturned {
		r.pass(invOrder, seen[in.UUID], c, in.NodeUUID, "instance "+in.UUID+" landed during the node listing, missing from the instance listing", nil)
	}
}

// pass counts one evaluation of an invariant and records a violation.
func (r *Runner) pass(inv string, ok bool, c int, node, detail string, log []placementfake.Request) {
	r.rep.Checks[inv]++
	if ok {
		return
	}
	r.rep.ViolationCount++
	r.rep.ViolationsBy[inv]++
	if r.cfg.Progress != nil && r.rep.ViolationCount <= 4*maxViolations {
		fmt.Fprintf(r.cfg.Progress, "soak: VIOLATION cycle %d: %s: node %s: %s\n", c, inv, node, detail)
	}
	if len(r.rep.Violations) < maxViolations {
		r.rep.Violations = append(r.rep.Violations, Violation{
			Cycle: c, Invariant: inv, Node: node, Detail: detail, Requests: excerpt(log, node),
		})
	}
}

func (r *Runner) checkLog(c int, log []placementfake.Request, want map[string]want) (vanishedNow map[string]bool) {
	vanishedNow = map[string]bool{}
	for _, q := range log {
		if r.cfg.Trace != "" && strings.Contains(q.Path, r.cfg.Trace) {
			r.trace(r.cfg.Trace, "request %s %s -> %d %s", q.Method, q.Path, q.Status, q.Fault)
		}
		seg := strings.Split(strings.TrimPrefix(q.Path, "/"), "/")
		r.pass(invOpaqueGens, len(q.Unknown) == 0, c, "", fmt.Sprintf("%s %s sent %v", q.Method, q.Path, q.Unknown), log)
		r.pass(invNoAllocWrites, seg[0] != "allocations" && !(q.Method == "DELETE" && len(seg) == 3 && seg[2] == "inventories"),
			c, "", q.Method+" "+q.Path, log)
		if seg[0] != "resource_providers" {
			continue
		}
		if len(seg) > 1 {
			r.pass(invForeignUntouched, !r.foreignProviders[seg[1]], c, seg[1], q.Method+" "+q.Path, log)
			if vanished(q.Fault) {
				vanishedNow[seg[1]] = true
			}
		}
		switch {
		case q.Method == "DELETE" && len(seg) == 2:
			r.checkDelete(c, seg[1], q, log)
		case q.Method == "POST" && len(seg) == 1:
			var body struct{ UUID string }
			_ = json.Unmarshal(q.Body, &body)
			_, listed := want[body.UUID]
			r.pass(invCreateListed, listed, c, body.UUID, "created without being listed in scope", log)
		case q.Method == "PUT" && len(seg) == 3 && seg[2] == "inventories":
			r.checkInventoryWrite(c, seg[1], q, want, log)
		}
	}
	return vanishedNow
}

func (r *Runner) checkDelete(c int, u string, q placementfake.Request, log []placementfake.Request) {
	defer func() {
		if q.Status == 204 {
			r.providerGone(u)
		}
	}()
	n := r.w.byUUID[u]
	if n == nil || n.enrolled {
		r.pass(invDeleteProof, false, c, u, "the node exists (or never did)", log)
		return
	}
	// The engine's rule: a proof this cycle and one in an earlier cycle
	// after the last listing this engine process saw the node in.
	last, seen := r.lastListed[u], r.lastListed[u] >= r.processStart
	earlier := slices.ContainsFunc(r.proofs[u], func(p int) bool { return p < c && (!seen || p > last) })
	r.pass(invDeleteProof, slices.Contains(r.proofs[u], c) && earlier, c, u,
		fmt.Sprintf("proven gone in cycles %v, last seen listed in cycle %d (this engine since cycle %d)", lastOf(r.proofs[u], 4), last, r.processStart), log)
	if n.goneSince > c-1 {
		// The stricter reading: gone for two cycles in a row. The
		// node came back and went again while this engine could not see
		// it (a failed listing, or a crash that lost the record).
		r.rep.UnseenReenrollDeletes = append(r.rep.UnseenReenrollDeletes,
			fmt.Sprintf("cycle %d, node %s: gone again since cycle %d; proven gone in cycles %v, last listed in cycle %d",
				c, u, n.goneSince, lastOf(r.proofs[u], 4), last))
	}
}

// lastOf is the tail of a long list, for messages.
func lastOf(xs []int, n int) []int { return xs[max(0, len(xs)-n):] }

// checkInventoryWrite: a listed node's record must carry the reservation
// the two snapshots imply (order: an instance listed after the node
// snapshot still reserves); any other class, and any unlisted node's,
// must be fully reserved.
func (r *Runner) checkInventoryWrite(c int, u string, q placementfake.Request, want map[string]want, log []placementfake.Request) {
	var body struct {
		Inventories map[string]placementfake.Inventory `json:"inventories"`
	}
	if err := json.Unmarshal(q.Body, &body); err != nil {
		r.pass(invInventoryInputs, false, c, u, "undecodable body: "+err.Error(), log)
		return
	}
	w, listed := want[u]
	for rc, inv := range body.Inventories {
		var ok bool
		detail := fmt.Sprintf("%s %+v", rc, inv)
		if listed && rc == w.class {
			exp := placementfake.Inventory{Total: 1, Reserved: w.reserved, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1}
			ok, detail = inv == exp, fmt.Sprintf("%s written %+v, want %+v", rc, inv, exp)
		} else {
			ok = inv.Reserved == inv.Total
			detail += ": a class the node does not report, or an unlisted node, must be fully reserved"
		}
		r.pass(invInventoryInputs, ok, c, u, detail, log)
	}
	if listed {
		_, has := body.Inventories[w.class]
		r.pass(invInventoryInputs, has, c, u, "inventory written without the node's class "+w.class, log)
	}
}

// vanished says whether a Vanish fault took effect: a drop or an
// injected status ends the request before it is served, Vanish included.
func vanished(fault string) bool {
	return strings.Contains(fault, "vanish") && !strings.Contains(fault, "drop") && !strings.Contains(fault, "status=")
}

// excerpt is the part of the cycle's request log about one provider (or
// the start of the log), for a violation report.
func excerpt(log []placementfake.Request, node string) []string {
	var out []string
	for _, q := range log {
		if node != "" && !strings.Contains(q.Path, node) {
			continue
		}
		line := fmt.Sprintf("%s %s -> %d", q.Method, q.Path, q.Status)
		if q.Fault != "" {
			line += " [fault " + q.Fault + "]"
		}
		if q.Method != "GET" && len(q.Body) > 0 {
			line += " " + truncate(string(q.Body), 200)
		}
		out = append(out, line)
		if len(out) == 12 {
			break
		}
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
