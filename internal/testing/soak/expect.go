package soak

import (
	"slices"
	"strings"

	"github.com/rpengine/rpengine/hostabi"
)

// The oracle: what one cycle should write, computed from the same two
// snapshots the engine received, by code that shares nothing with the
// engine's (docs/BEHAVIOUR.md's table, restated for the world's value space).
// Sharing the engine's DesiredState would let one bug hide in both.

// want is the provider one listed node should have.
type want struct {
	class    string // normalised
	reserved int64
	traits   []string // sorted: owner, markers, the node's valid traits
}

// expectations maps node uuid (lower case) to its provider, for the nodes
// the engine must write; quarantined and out-of-scope nodes are absent.
func (p policy) expectations(nodes []hostabi.Node, instances []hostabi.Instance) map[string]want {
	occupied := map[string]bool{}
	for _, in := range instances {
		occupied[strings.ToLower(in.NodeUUID)] = true
	}
	count := map[string]int{}
	for _, n := range nodes {
		count[strings.ToLower(n.UUID)]++
	}
	out := make(map[string]want, len(nodes))
	for _, n := range nodes {
		u := strings.ToLower(n.UUID)
		if !slices.Contains(p.shards, n.Shard) || count[u] > 1 || !lowerUUID(u) ||
			n.ResourceClass == "" || len(n.Resources) > 0 || p.overLimit(n) {
			continue
		}
		w := want{class: normalise(n.ResourceClass), traits: slices.Clone(p.baseTraits)}
		if reservedState(n) || n.InstanceUUID != "" || occupied[u] {
			w.reserved = 1
		}
		for _, t := range n.Traits {
			if validTrait(t) {
				w.traits = append(w.traits, t)
			}
		}
		slices.Sort(w.traits)
		w.traits = slices.Compact(w.traits)
		out[u] = w
	}
	return out
}

// overLimit says whether the plugin host marks the node for a string over
// its limit (plugin.max_field_length): the engine then quarantines it.
func (p policy) overLimit(n hostabi.Node) bool {
	if p.maxField == 0 {
		return false
	}
	strs := append([]string{n.UUID, n.Name, n.ResourceClass, n.InstanceUUID, n.PowerState, n.ProvisionState,
		n.TargetProvisionState, n.Fault, n.Shard, n.ConductorGroup}, n.Traits...)
	return slices.ContainsFunc(strs, func(s string) bool { return len(s) > p.maxField })
}

// reservedState is rows 1-6 of the reservation matrix.
func reservedState(n hostabi.Node) bool {
	return n.Maintenance || n.Retired || n.Fault != "" ||
		n.PowerState == "" || n.PowerState == "error" ||
		(n.ProvisionState != "" && n.ProvisionState != "available") ||
		n.TargetProvisionState != ""
}

// normalise is nova's class normalisation for the ASCII names the world
// uses: runs of other characters become "_", then upper case.
func normalise(class string) string {
	var b strings.Builder
	b.WriteString("CUSTOM_")
	run := false
	for _, r := range class {
		alnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		switch {
		case alnum:
			b.WriteString(strings.ToUpper(string(r)))
			run = false
		case !run:
			b.WriteByte('_')
			run = true
		}
	}
	return b.String()
}

func validTrait(t string) bool {
	if t == "" || len(t) > 255 {
		return false
	}
	return strings.Trim(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == ""
}

// lowerUUID is a uuid as the engine writes it: valid, and lower case.
func lowerUUID(s string) bool { return hostabi.ValidUUID(s) && s == strings.ToLower(s) }
