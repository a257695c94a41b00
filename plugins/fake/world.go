package main

import (
	"math/rand/v2"
	"strconv"

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
			Name:           nodeName(i),
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

// uuid formats two random words as a version 4 uuid. It does what
// fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", ...) did, without fmt: in
// Wasm, fmt made up most of generating a 100,000-node world.
func uuid(rng *rand.Rand) string {
	a, b := rng.Uint64(), rng.Uint64()
	a = a&^(0xf<<12) | 4<<12 // version 4
	b = b&^(3<<62) | 2<<62   // RFC 4122 variant
	var buf [36]byte
	hexTo(buf[0:8], a>>32)
	buf[8] = '-'
	hexTo(buf[9:13], a>>16)
	buf[13] = '-'
	hexTo(buf[14:18], a)
	buf[18] = '-'
	hexTo(buf[19:23], b>>48)
	buf[23] = '-'
	hexTo(buf[24:36], b)
	return string(buf[:])
}

// hexTo writes the low 4*len(dst) bits of v into dst as lowercase hex.
func hexTo(dst []byte, v uint64) {
	const digits = "0123456789abcdef"
	for i := len(dst) - 1; i >= 0; i-- {
		dst[i] = digits[v&0xf]
		v >>= 4
	}
}

// nodeName is fmt.Sprintf("node-%05d", i).
func nodeName(i int) string {
	s := strconv.Itoa(i)
	if len(s) < 5 {
		s = "00000"[len(s):] + s
	}
	return "node-" + s
}
