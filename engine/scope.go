package engine

import (
	"slices"

	"github.com/rpengine/rpengine/hostabi"
)

// Scope is the set of nodes this engine manages, from configuration only.
// Ownership never depends on the instance list. Empty lists mean "all".
type Scope struct {
	Shards          []string
	ConductorGroups []string
}

// Contains reports whether the engine manages n.
func (s Scope) Contains(n hostabi.Node) bool {
	if len(s.Shards) > 0 && !slices.Contains(s.Shards, n.Shard) {
		return false
	}
	if len(s.ConductorGroups) > 0 && !slices.Contains(s.ConductorGroups, n.ConductorGroup) {
		return false
	}
	return true
}

// Request is what the engine asks the source to list.
func (s Scope) Request() hostabi.ListNodesRequest {
	return hostabi.ListNodesRequest{Shards: s.Shards, ConductorGroups: s.ConductorGroups}
}
