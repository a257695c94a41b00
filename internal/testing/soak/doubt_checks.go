package soak

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// invDoubtReserved: every doubt reserves. After a cycle, the
// provider of a node it saw in scope but quarantined, or saw proven gone,
// offers nothing to the scheduler: every class reserved in full. A cycle
// that stopped short (a listing failed, Placement stopped answering) or
// reported an error for the node is not held to it: its write may not
// have been made.
const invDoubtReserved = "no provider of a quarantined or proven-gone node allocatable"

func (r *Runner) checkDoubts(c int, rep engine.Report, ps map[string]placementfake.ProviderState, want map[string]want, log []placementfake.Request) {
	if !r.listedInstance || slices.ContainsFunc(rep.Errors, func(e engine.Error) bool { return e.Node == "" }) {
		return
	}
	failed := map[string]bool{}
	for _, e := range rep.Errors {
		if e.Kind != engine.ErrQuarantined && e.Kind != engine.ErrInvalidData {
			failed[e.Node] = true
		}
	}
	doubted := map[string]string{}
	listed := map[string]bool{}
	for _, n := range r.snapNodes {
		u := strings.ToLower(n.UUID)
		listed[u] = true
		if _, ok := want[u]; !ok && lowerUUID(u) && slices.Contains(r.pol.shards, n.Shard) {
			doubted[u] = "quarantined"
		}
	}
	for u, proofs := range r.proofs {
		if slices.Contains(proofs, c) && !listed[u] {
			doubted[u] = "proven gone"
		}
	}
	for u, why := range doubted {
		p, ok := ps[u]
		if !ok || failed[u] || !slices.Contains(p.Traits, r.pol.OwnerTrait) {
			continue
		}
		open := ""
		for rc, inv := range p.Inventories {
			if inv.Reserved < inv.Total {
				open = fmt.Sprintf("%s reserved %d of %d", rc, inv.Reserved, inv.Total)
			}
		}
		r.pass(invDoubtReserved, open == "", c, u, why+", but its provider is allocatable: "+open, log)
	}
}
