package engine

import (
	"slices"
	"strings"

	"github.com/rpengine/rpengine/hostabi"
)

// listedNodes is what a cycle still needs of the node listing once the
// desired state is derived, so that the listing itself (a quarter of a
// cold cycle's live heap at 100,000 nodes) is not kept through the
// syncs: the uuids, to tell unlisted providers (deletion.go), and beside
// nova the listed nodes in scope, whose holds stay (hold.go).
type listedNodes struct {
	uuids   []string // lowercase
	inScope []string // lowercase; beside nova only
}

func listedOf(nodes []hostabi.Node, pol Policy) listedNodes { return listedWith(nodes, nil, pol) }

// listedWith is listedOf with the nodes' keys desiredState left (one per
// node: its lowercased uuid and index), so the uuids are not lowercased
// again: at 100,000 nodes each pass over their uuids, scattered through
// the heap, is a few per cent of an idle cycle. Keys that are not one per
// node (nil) are not used.
func listedWith(nodes []hostabi.Node, keys []nodeKey, pol Policy) listedNodes {
	l := listedNodes{uuids: make([]string, len(nodes))}
	if len(keys) == len(nodes) {
		for _, k := range keys {
			l.uuids[k.i] = k.id
		}
	} else {
		for i, n := range nodes {
			l.uuids[i] = strings.ToLower(n.UUID) // no copy when already lowercase
		}
	}
	if pol.Nova.Enabled {
		for i, n := range nodes {
			if pol.Scope.Contains(n) {
				l.inScope = append(l.inScope, l.uuids[i])
			}
		}
	}
	l.uuids = inGroups(l.uuids, nodes, pol.Scope)
	return l
}

// inGroups drops from uuids (one per node, in nodes' order) the nodes
// listed outside the scope's shards and conductor groups: a source that
// lists them anyway (an Ironic that ignores the filter, a plugin without
// one) shows them moved away, so they are unlisted for this engine and
// their providers reserved as left the scope (doubt.go), as when the
// source leaves them out. Nodes of partitions held elsewhere stay: a
// partition is not a place a node moves to.
func inGroups(uuids []string, nodes []hostabi.Node, s Scope) []string {
	if len(s.Shards) == 0 && len(s.ConductorGroups) == 0 {
		return uuids
	}
	all := Scope{Shards: s.Shards, ConductorGroups: s.ConductorGroups}
	first := 0
	for first < len(nodes) && all.contains(&nodes[first]) {
		first++
	}
	if first == len(nodes) {
		return uuids // the usual case (the source filtered): no copy
	}
	out := slices.Clone(uuids[:first])
	for i := first + 1; i < len(uuids); i++ {
		if all.contains(&nodes[i]) {
			out = append(out, uuids[i])
		}
	}
	return out
}
