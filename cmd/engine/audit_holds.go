package main

import (
	"strings"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/baremetal"
	"github.com/rpengine/rpengine/hostabi"
)

// holdCheck judges each listed node's hold against what Placement holds.
// The plan finds a hold missing or unwanted when the hold project's usage
// sum disagrees with the engine's book, or when a held node has room
// after the listing moved (engine/holdswap.go); a hold deleted beside one
// planted outside the listing shows in neither, so audit reads the holds
// themselves (the allocations it reads anyway).
type holdCheck struct {
	beside engine.Beside
	nodes  map[string]hostabi.Node // by lower-case uuid
	named  map[string]bool         // nodes whose hold the plan named already
}

func newHoldCheck(pol engine.Policy, nodes []hostabi.Node, fs []finding) holdCheck {
	h := holdCheck{beside: pol.Nova}
	if !h.beside.Enabled {
		return h
	}
	h.nodes = make(map[string]hostabi.Node, len(nodes))
	for _, n := range nodes {
		h.nodes[strings.ToLower(n.UUID)] = n
	}
	h.named = map[string]bool{}
	for _, f := range fs {
		if f.Kind == driftHold {
			h.named[f.Node] = true
		}
	}
	return h
}

// judge returns the finding for o's provider, held or not, if any. Only
// nodes the source lists and the plan synced are judged: a quarantined
// node, or one proven gone, keeps its hold by design.
func (h holdCheck) judge(o engine.Outcome, held bool) (finding, bool) {
	if !h.beside.Enabled || h.named[o.Node] || o.Kind != engine.KindUpdated && o.Kind != engine.KindUnchanged {
		return finding{}, false
	}
	n, ok := h.nodes[o.Node]
	if !ok {
		return finding{}, false
	}
	why := baremetal.ReservedReason(o.Reserved)
	wants := baremetal.NeedsHold(why, baremetal.NovaReserved(n, h.beside.SkipReserveInUse))
	switch {
	case wants && !held:
		return finding{Kind: driftHold, Node: o.Node, Name: o.Name, Detail: "hold missing"}, true
	case !wants && held:
		return finding{Kind: driftHold, Node: o.Node, Name: o.Name, Detail: "hold without a reason"}, true
	}
	return finding{}, false
}
