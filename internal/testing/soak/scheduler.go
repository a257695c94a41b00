package soak

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
)

// land plays nova's scheduler: it claims a free provider in Placement
// (an allocation, which bumps the provider's generation) and Ironic starts
// deploying the node. The scheduler sees only Placement, so it can land on
// a node whose listing the engine is in the middle of.
func (r *Runner) land(rng *rand.Rand) bool {
	n := r.w.pick(func(n *wnode) bool {
		return n.enrolled && n.InstanceUUID == "" && !reservedState(n.Node)
	})
	if n == nil {
		return false
	}
	class, ok := r.freeClass(n.UUID)
	if !ok {
		return false
	}
	r.w.nextID++
	inst := fmt.Sprintf("1a000000-0000-4000-8000-%012d", r.w.nextID)
	if err := r.fake.Allocate(inst, n.UUID, map[string]int64{class: 1}); err != nil {
		return false
	}
	r.w.instances[inst] = &winstance{uuid: inst, node: n.UUID, class: class}
	r.touch(n.UUID)
	n.InstanceUUID, n.ProvisionState, n.TargetProvisionState = inst, "deploying", "active"
	return true
}

// freeClass is a class of the provider with room for one more consumer.
func (r *Runner) freeClass(uuid string) (string, bool) {
	p, ok := r.fake.Provider(uuid)
	if !ok {
		return "", false
	}
	for _, rc := range slices.Sorted(maps.Keys(p.Inventories)) {
		if inv := p.Inventories[rc]; inv.Total-inv.Reserved-p.Usages[rc] >= 1 {
			return rc, true
		}
	}
	return "", false
}

// deleteInstance: nova frees the allocation (PUT {} usually, a forced
// DELETE sometimes), then Ironic cleans the node.
func (r *Runner) deleteInstance(rng *rand.Rand) bool {
	if len(r.w.instances) == 0 {
		return false
	}
	keys := slices.Sorted(maps.Keys(r.w.instances))
	in := r.w.instances[keys[rng.IntN(len(keys))]]
	force := rng.IntN(10) < 3
	if in.class != "" {
		if err := r.nova.free(in.uuid, force); err != nil {
			// Kept as a leak: the usage is still expected in Placement.
			r.leaks[in.uuid] = *in
			r.rep.Events["allocation_free_failed"]++
		}
	}
	delete(r.w.instances, in.uuid)
	r.touch(in.node)
	if n := r.w.byUUID[in.node]; n != nil && n.InstanceUUID == in.uuid {
		n.InstanceUUID, n.ProvisionState, n.TargetProvisionState = "", "cleaning", "available"
	}
	if force {
		r.rep.Events["instance_deleted_forced"]++
	}
	return true
}

// changeClass changes a node's resource class; on an occupied node the
// allocation stays on the old class, which Placement then refuses to drop.
func (r *Runner) changeClass(rng *rand.Rand) bool {
	n := r.w.pick(func(n *wnode) bool { return n.enrolled })
	if n == nil {
		return false
	}
	old := n.ResourceClass
	for n.ResourceClass == old {
		n.ResourceClass = classes[rng.IntN(len(classes))]
	}
	r.touch(n.UUID)
	if n.InstanceUUID != "" {
		r.rep.Events["class_change_occupied"]++
	}
	return true
}

// otherWriter edits a provider the engine manages, as an operator or
// another service would.
func (r *Runner) otherWriter(kind string, rng *rand.Rand) bool {
	var u string
	if len(r.recent) > 0 && rng.IntN(2) == 0 {
		u = r.recent[rng.IntN(len(r.recent))]
	} else if n := r.w.pick(func(*wnode) bool { return true }); n != nil {
		u = n.UUID
	}
	if _, ok := r.fake.Provider(u); !ok {
		return false
	}
	switch kind {
	case "foreign_trait":
		t := foreignPool[rng.IntN(len(foreignPool))]
		if r.fake.AddTrait(u, t) != nil {
			return false
		}
		add(r.foreignTraits, u, t)
	case "foreign_aggregate":
		a := foreignAggs[rng.IntN(len(foreignAggs))]
		if r.fake.AddAggregate(u, a) != nil {
			return false
		}
		add(r.foreignAggs, u, a)
	case "generation_bump":
		return r.fake.BumpGeneration(u) == nil
	case "oob_provider_delete":
		if r.fake.DeleteProvider(u) != nil {
			return false
		}
		r.providerGone(u)
	}
	return true
}

// providerGone forgets what lived on a provider that was deleted, by the
// engine (with proof) or out of band: its foreign traits and aggregates,
// and its allocations (the instances stay, without them).
func (r *Runner) providerGone(u string) {
	delete(r.foreignTraits, u)
	delete(r.foreignAggs, u)
	delete(r.tolerated, u)
	for _, in := range r.w.instances {
		if in.node == u {
			in.class = ""
		}
	}
	for c, in := range r.leaks {
		if in.node == u {
			delete(r.leaks, c)
		}
	}
}

func add(m map[string]map[string]bool, k, v string) {
	if m[k] == nil {
		m[k] = map[string]bool{}
	}
	m[k][v] = true
}
