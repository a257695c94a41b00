package main

import (
	"fmt"
	"math/rand/v2"

	"github.com/rpengine/rpengine/hostabi"
)

// generate builds a deterministic world from the config: the same seed
// always yields the same nodes, states and instances.
func generate(c config) ([]hostabi.Node, []hostabi.Instance) {
	rng := rand.New(rand.NewPCG(uint64(c.Seed), 0x5eed))
	classes := c.ResourceClasses
	if len(classes) == 0 {
		classes = []string{"baremetal"}
	}
	nodes := make([]hostabi.Node, 0, c.Nodes+len(c.Node))
	var instances []hostabi.Instance
	for i := range c.Nodes {
		n := hostabi.Node{
			UUID:           uuid(rng),
			Name:           fmt.Sprintf("node-%05d", i),
			ResourceClass:  classes[i%len(classes)],
			PowerState:     "power off",
			ProvisionState: "available",
		}
		if len(c.Shards) > 0 {
			n.Shard = c.Shards[i%len(c.Shards)]
		}
		if rng.Float64() < c.InstanceFraction {
			inst := uuid(rng)
			n.InstanceUUID, n.ProvisionState, n.PowerState = inst, "active", "power on"
			instances = append(instances, hostabi.Instance{UUID: inst, NodeUUID: n.UUID})
		}
		if rng.Float64() < c.MaintenanceFraction {
			n.Maintenance = true
		}
		nodes = append(nodes, n)
	}
	nodes = append(nodes, c.Node...)
	instances = append(instances, c.Instance...)
	return nodes, instances
}

func uuid(rng *rand.Rand) string {
	a, b := rng.Uint64(), rng.Uint64()
	a = a&^(0xf<<12) | 4<<12 // version 4
	b = b&^(3<<62) | 2<<62   // RFC 4122 variant
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x",
		a>>32, (a>>16)&0xffff, a&0xffff, b>>48, b&0xffffffffffff)
}
