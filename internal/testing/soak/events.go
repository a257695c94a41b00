package soak

import (
	"math/rand/v2"
	"slices"
)

// eventWeights is how often each world event is drawn between cycles.
// Events that need a matching node and find none are counted as skipped.
var eventWeights = []struct {
	kind   string
	weight int
}{
	{"instance_lands", 20},
	{"instance_deleted", 14},
	{"maintenance_flip", 10},
	{"power_flip", 8},
	{"node_traits_changed", 8},
	{"provision_flip", 5},
	{"foreign_trait", 5},
	{"class_change", 4},
	{"fault_flag", 4},
	{"foreign_aggregate", 3},
	{"generation_bump", 3},
	{"node_deleted", 3},
	{"node_flaps", 2},
	{"node_reenrolled", 3},
	{"oob_provider_delete", 2},
	{"retired_flip", 2},
	{"node_enrolled", 1},
	{"scope_move", 1},
}

func drawEvent(rng *rand.Rand) string {
	total := 0
	for _, e := range eventWeights {
		total += e.weight
	}
	x := rng.IntN(total)
	for _, e := range eventWeights {
		if x < e.weight {
			return e.kind
		}
		x -= e.weight
	}
	panic("unreachable")
}

// worldStep evolves the world between cycles: nodes in transition move on,
// then a few random events (more on bigger worlds). The caller holds r.mu.
func (r *Runner) worldStep() {
	w := r.w
	for _, n := range w.nodes {
		r.progress(n)
	}
	r.runScheduled()
	events := 1 + w.rng.IntN(max(2, len(w.nodes)/80))
	for range events {
		kind := drawEvent(w.rng)
		if r.apply(kind, w.rng) {
			r.rep.Events[kind]++
		} else {
			r.rep.Events["skipped_"+kind]++
		}
	}
}

// progress moves a node in transition one step, like Ironic's conductor.
func (r *Runner) progress(n *wnode) {
	if !n.enrolled || r.w.rng.IntN(2) == 0 {
		return
	}
	switch {
	case n.ProvisionState == "deploying":
		n.ProvisionState, n.TargetProvisionState, n.PowerState = "active", "", "power on"
	case n.ProvisionState == "cleaning":
		n.ProvisionState, n.TargetProvisionState, n.PowerState = "available", "", "power off"
	case n.ProvisionState == "manageable" && r.w.rng.IntN(3) == 0:
		n.ProvisionState = "available"
	default:
		return
	}
	r.rep.Events["state_progress"]++
}

// apply runs one event; false if no node fitted.
func (r *Runner) apply(kind string, rng *rand.Rand) bool {
	w := r.w
	enrolled := func(n *wnode) bool { return n.enrolled }
	switch kind {
	case "instance_lands":
		return r.land(rng)
	case "instance_deleted":
		return r.deleteInstance(rng)
	case "maintenance_flip":
		return r.flip(w.pick(enrolled), func(n *wnode) { n.Maintenance = !n.Maintenance })
	case "retired_flip":
		return r.flip(w.pick(enrolled), func(n *wnode) { n.Retired = !n.Retired })
	case "fault_flag":
		return r.flip(w.pick(enrolled), func(n *wnode) {
			n.Fault = map[bool]string{true: "", false: "power failure"}[n.Fault != ""]
		})
	case "power_flip":
		return r.flip(w.pick(enrolled), func(n *wnode) {
			n.PowerState = []string{"power on", "power off", "error", ""}[rng.IntN(4)]
		})
	case "provision_flip":
		// A transition with a target, as nova bug 1974070: reserved throughout.
		return r.flip(w.pick(func(n *wnode) bool { return enrolled(n) && n.ProvisionState == "available" && n.InstanceUUID == "" }),
			func(n *wnode) { n.ProvisionState, n.TargetProvisionState = "cleaning", "available" })
	case "node_traits_changed":
		return r.flip(w.pick(enrolled), func(n *wnode) { w.toggleTrait(n, rng) })
	case "class_change":
		return r.changeClass(rng)
	case "node_deleted":
		// Half the time a node that just changed: one re-enrolled a cycle
		// ago and deleted again is what tests proofs of deletion hardest.
		deletable := func(n *wnode) bool { return enrolled(n) && n.InstanceUUID == "" && idle(n) }
		return r.flip(r.pickRecent(rng, deletable), func(n *wnode) {
			n.enrolled, n.goneSince, n.hostile = false, r.cycle, ""
		})
	case "node_flaps":
		return r.flap(rng)
	case "node_reenrolled":
		return r.flip(r.pickRecent(rng, func(n *wnode) bool { return !n.enrolled }), func(n *wnode) { r.reenroll(n, rng) })
	case "node_enrolled":
		n := w.enroll("manageable")
		n.everInScope = n.inScope()
		return true
	case "scope_move":
		return r.flip(w.pick(enrolled), func(n *wnode) { moveScope(n, rng) })
	case "foreign_trait", "foreign_aggregate", "generation_bump", "oob_provider_delete":
		return r.otherWriter(kind, rng)
	}
	return false
}

// toggleTrait adds one of nodeTraits to n, or removes it if n has it.
func (w *Cloud) toggleTrait(n *wnode, rng *rand.Rand) {
	ts := slices.Clone(n.Traits)
	if t := nodeTraits[rng.IntN(len(nodeTraits))]; slices.Contains(ts, t) {
		ts = slices.DeleteFunc(ts, func(x string) bool { return x == t })
	} else {
		ts = append(ts, t)
	}
	w.setTraits(n, ts)
}

// moveScope moves n out of the engine's shards, or back into one.
func moveScope(n *wnode, rng *rand.Rand) {
	if n.Shard == shardOut {
		n.Shard = shardsIn[rng.IntN(len(shardsIn))]
	} else {
		n.Shard = shardOut
	}
	n.everInScope = n.everInScope || n.inScope()
}

// flip changes a node and remembers it as recently changed: other
// writers aim there, where the engine is about to write.
func (r *Runner) flip(n *wnode, f func(*wnode)) bool {
	if n == nil {
		return false
	}
	f(n)
	r.touch(n.UUID)
	r.trace(n.UUID, "event: now %+v enrolled=%v", n.Node, n.enrolled)
	return true
}

// pickRecent picks among recently changed nodes half the time, else any.
func (r *Runner) pickRecent(rng *rand.Rand, ok func(*wnode) bool) *wnode {
	if rng.IntN(2) == 0 {
		for _, u := range r.recent {
			if n := r.w.byUUID[u]; n != nil && ok(n) {
				return n
			}
		}
	}
	return r.w.pick(ok)
}

func (r *Runner) touch(u string) {
	r.recent = append(r.recent, u)
	if len(r.recent) > 32 {
		r.recent = r.recent[1:]
	}
}

// idle: a node Ironic would let an operator delete.
func idle(n *wnode) bool {
	return n.ProvisionState == "available" || n.ProvisionState == "manageable"
}

func (r *Runner) reenroll(n *wnode, rng *rand.Rand) {
	n.enrolled, n.ProvisionState, n.TargetProvisionState = true, "manageable", ""
	n.Maintenance, n.Fault, n.Retired, n.PowerState = false, "", false, "power off"
	n.ResourceClass = classes[rng.IntN(len(classes))]
	n.everInScope = n.everInScope || n.inScope()
}

// scheduled is a world change due at the start of a later cycle.
type scheduled struct {
	cycle int
	node  *wnode
	what  string // "reenroll" or "delete"
}

// flap deletes a node, re-enrolls it with the same uuid a cycle or two
// later, and deletes it again a cycle or two after that: each deletion
// must be proven afresh, however the proofs of the first one went.
func (r *Runner) flap(rng *rand.Rand) bool {
	n := r.w.pick(func(n *wnode) bool { return n.enrolled && n.InstanceUUID == "" && idle(n) })
	if n == nil {
		return false
	}
	n.enrolled, n.goneSince, n.hostile = false, r.cycle, ""
	r.trace(n.UUID, "flap: deleted")
	back := r.cycle + 1 + rng.IntN(2)
	r.pending = append(r.pending, scheduled{back, n, "reenroll"}, scheduled{back + 1 + rng.IntN(2), n, "delete"})
	return true
}

func (r *Runner) runScheduled() {
	keep := r.pending[:0]
	for _, s := range r.pending {
		switch {
		case s.cycle > r.cycle:
			keep = append(keep, s)
		case s.what == "reenroll" && !s.node.enrolled:
			r.reenroll(s.node, r.w.rng)
			r.rep.Events["node_flap_reenrolled"]++
			r.trace(s.node.UUID, "flap: re-enrolled")
		case s.what == "delete" && s.node.enrolled && s.node.InstanceUUID == "" && idle(s.node):
			s.node.enrolled, s.node.goneSince, s.node.hostile = false, r.cycle, ""
			r.rep.Events["node_flap_deleted_again"]++
			r.trace(s.node.UUID, "flap: deleted again")
		}
	}
	r.pending = keep
}
