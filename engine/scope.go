package engine

import (
	"hash/fnv"
	"slices"
	"strings"

	"github.com/rpengine/rpengine/hostabi"
)

// Scope is the set of nodes this engine manages, from configuration (or,
// with several engines, from the coordinator's assignment) only.
// Ownership never depends on the instance list. Empty lists mean "all".
type Scope struct {
	Shards          []string
	ConductorGroups []string
	// Partitions > 0 divides nodes by a hash of their uuid into that many
	// partitions, of which this engine manages Held.
	Partitions int
	Held       []int
}

// Contains reports whether the engine manages n.
func (s Scope) Contains(n hostabi.Node) bool { return s.contains(&n) }

// contains is Contains without copying the node (200 bytes) and the
// scope: the desired state asks it of every node each cycle.
func (s *Scope) contains(n *hostabi.Node) bool {
	if len(s.Shards) > 0 && !slices.Contains(s.Shards, n.Shard) {
		return false
	}
	if len(s.ConductorGroups) > 0 && !slices.Contains(s.ConductorGroups, n.ConductorGroup) {
		return false
	}
	return s.HoldsPartitionOf(n.UUID)
}

// HoldsPartitionOf reports whether the node uuid's partition is one the
// engine holds (always, without partitions): all of the scope a uuid
// alone can tell, before the node is read.
func (s Scope) HoldsPartitionOf(uuid string) bool {
	return s.Partitions == 0 || slices.Contains(s.Held, Partition(uuid, s.Partitions))
}

// Partition maps a node uuid onto one of n partitions, the same way on
// every engine.
func Partition(uuid string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(strings.ToLower(uuid)))
	return int(h.Sum32() % uint32(n))
}

// Request is what the engine asks the source to list.
func (s Scope) Request() hostabi.ListNodesRequest {
	return hostabi.ListNodesRequest{Shards: s.Shards, ConductorGroups: s.ConductorGroups}
}
