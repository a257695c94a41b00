package soak

import (
	"fmt"
	"maps"
	"slices"

	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// providers snapshots every provider in the fake.
func (r *Runner) providers() map[string]placementfake.ProviderState {
	uuids := r.fake.ProviderUUIDs()
	out := make(map[string]placementfake.ProviderState, len(uuids))
	for _, u := range uuids {
		if p, ok := r.fake.Provider(u); ok {
			out[u] = p
		}
	}
	return out
}

// forgetVanished drops what a provider deleted by a Vanish fault lost:
// foreign traits and aggregates, allocations. Only what is really gone,
// because mid-cycle writers may have added to the recreated provider
// after the fault, and the request log does not order the two.
func (r *Runner) forgetVanished(vanished map[string]bool, ps map[string]placementfake.ProviderState) {
	for u := range vanished {
		p := ps[u]
		for t := range r.foreignTraits[u] {
			if !slices.Contains(p.Traits, t) {
				delete(r.foreignTraits[u], t)
			}
		}
		for a := range r.foreignAggs[u] {
			if !slices.Contains(p.Aggregates, a) {
				delete(r.foreignAggs[u], a)
			}
		}
		for _, in := range r.w.instances {
			if in.node == u && in.class != "" && p.Usages[in.class] == 0 {
				in.class = ""
			}
		}
		for c, in := range r.leaks {
			if in.node == u && p.Usages[in.class] == 0 {
				delete(r.leaks, c)
			}
		}
		delete(r.tolerated, u)
	}
}

// checkState runs the invariants that hold after every cycle, faults or
// not: allocations, foreign edits, no stray providers.
func (r *Runner) checkState(c int, ps map[string]placementfake.ProviderState, log []placementfake.Request) {
	expected := map[string]map[string]int64{}
	for _, in := range r.w.instances {
		if in.class != "" {
			addUsage(expected, in.node, in.class)
		}
	}
	for _, in := range r.leaks {
		addUsage(expected, in.node, in.class)
	}
	for u, exp := range expected {
		got := nonZero(ps[u].Usages)
		r.pass(invAllocsIntact, maps.Equal(got, exp), c, u, fmt.Sprintf("usages %v, want %v", got, exp), log)
	}
	for u, p := range ps {
		if expected[u] == nil {
			got := nonZero(p.Usages)
			r.pass(invAllocsIntact, len(got) == 0, c, u, fmt.Sprintf("usages %v from nowhere", got), log)
		}
		for t := range r.foreignTraits[u] {
			r.pass(invForeignSurvive, slices.Contains(p.Traits, t), c, u, "foreign trait "+t+" removed", log)
		}
		for a := range r.foreignAggs[u] {
			r.pass(invForeignSurvive, slices.Contains(p.Aggregates, a), c, u, "foreign aggregate "+a+" removed", log)
		}
		if r.foreignProviders[u] {
			continue
		}
		n := r.w.byUUID[u]
		r.pass(invNoStrayProvider, n != nil && n.everInScope, c, u, "provider of a node never in scope, or of no node", log)
	}
}

// checkConverged: after two quiet cycles Placement must be the desired
// state, save what README allows: foreign traits and aggregates, classes
// kept while allocations use them (fully reserved), and former node traits
// a crashed engine no longer knows it added.
func (r *Runner) checkConverged(c int, ps map[string]placementfake.ProviderState, want map[string]want, log []placementfake.Request) {
	r.pass(invConverged, r.listedNodes && r.listedInstance, c, "", "a quiet cycle could not list", log)
	for u, w := range want {
		p, ok := ps[u]
		r.pass(invNoMissing, ok, c, u, "provider missing", log)
		if !ok {
			continue
		}
		r.pass(invConverged, p.Name == u, c, u, "name "+p.Name, log)
		exp := placementfake.Inventory{Total: 1, Reserved: w.reserved, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1}
		r.pass(invConverged, p.Inventories[w.class] == exp, c, u,
			fmt.Sprintf("%s is %+v, want %+v", w.class, p.Inventories[w.class], exp), log)
		for rc, inv := range p.Inventories {
			if rc != w.class {
				r.pass(invConverged, p.Usages[rc] > 0 && inv.Reserved == inv.Total, c, u,
					fmt.Sprintf("stale class %s %+v, usage %d", rc, inv, p.Usages[rc]), log)
			}
		}
		for _, t := range w.traits {
			r.pass(invConverged, slices.Contains(p.Traits, t), c, u, "missing trait "+t, log)
		}
		for _, t := range p.Traits {
			wanted := slices.Contains(w.traits, t) || r.foreignTraits[u][t]
			if !wanted && r.tolerated[u][t] {
				r.stale[u+" "+t] = true
				continue
			}
			r.pass(invNoLeftovers, wanted, c, u, "extra trait "+t, log)
		}
		for _, a := range r.pol.Aggregates {
			r.pass(invConverged, slices.Contains(p.Aggregates, a), c, u, "missing aggregate "+a, log)
		}
		for _, a := range p.Aggregates {
			r.pass(invConverged, slices.Contains(r.pol.Aggregates, a) || r.foreignAggs[u][a], c, u, "extra aggregate "+a, log)
		}
	}
	r.checkReaped(c, ps, log)
}

// checkReaped: a provider of a node gone since before the quiet phase's
// previous cycle has had its two proofs and must be deleted, unless
// allocations hold it (then it must be fully reserved).
func (r *Runner) checkReaped(c int, ps map[string]placementfake.ProviderState, log []placementfake.Request) {
	for _, n := range r.w.nodes {
		if n.enrolled || !n.everInScope || max(n.goneSince, r.quietStart) > c-1 {
			continue
		}
		p, exists := ps[n.UUID]
		switch {
		case !exists:
			r.pass(invReaped, true, c, n.UUID, "", nil)
			r.pass(invNoLeftovers, true, c, n.UUID, "", nil)
		case !slices.Contains(p.Traits, r.pol.OwnerTrait) && r.recordLost[n.UUID]:
			// Created before a crash that also deleted the state file: it
			// cannot be proven ours, so it is never deleted.
			r.rep.Orphans[n.UUID] = true
		case !slices.Contains(p.Traits, r.pol.OwnerTrait):
			r.pass(invNoLeftovers, false, c, n.UUID, "unmarked provider left by a crash that kept the state file", log)
		case len(nonZero(p.Usages)) > 0:
			for rc, inv := range p.Inventories {
				r.pass(invReaped, inv.Reserved == inv.Total, c, n.UUID, fmt.Sprintf("deleted node's %s not fully reserved: %+v", rc, inv), log)
			}
		default:
			r.pass(invReaped, false, c, n.UUID, fmt.Sprintf("node gone since cycle %d, provider still there", n.goneSince), log)
		}
	}
}

func addUsage(m map[string]map[string]int64, node, class string) {
	if m[node] == nil {
		m[node] = map[string]int64{}
	}
	m[node][class]++
}

func nonZero(m map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}
