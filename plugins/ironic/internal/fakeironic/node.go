package fakeironic

import (
	"fmt"
	"math/rand/v2"
	"strconv"
)

// Node is a node as the fake stores it. Empty strings are served as JSON
// null for the fields Ironic leaves null (power_state, target states,
// instance_uuid, fault, shard, name); ConductorGroup "" is served as "".
type Node struct {
	UUID                 string
	Name                 string
	ResourceClass        string
	ProvisionState       string
	TargetProvisionState string
	PowerState           string
	Maintenance          bool
	InstanceUUID         string
	ConductorGroup       string
	Shard                string
	Traits               []string
	Fault                string
	Retired              bool
	// Owner is Ironic's owner ("" serves null). Properties and Extra
	// are served as JSON objects (nil serves {}), as Ironic does.
	Owner      string
	Properties map[string]any
	Extra      map[string]any
	// UpdatedAt is Ironic's updated_at ("" serves null: never updated);
	// Server.Update sets it.
	UpdatedAt string
}

// Generate returns n deterministic nodes with a realistic mix: several
// resource classes and shards, 30% active with an instance, 5% in
// maintenance, some traits, the odd node in another state.
func Generate(n int, seed uint64) []Node {
	rng := rand.New(rand.NewPCG(seed, 0x1e0))
	classes := []string{"baremetal-gold", "baremetal-silver", "baremetal.large", "gpu_a100"}
	nodes := make([]Node, n)
	for i := range nodes {
		nd := Node{
			UUID:           UUID(rng),
			Name:           "bm-" + strconv.Itoa(i),
			ResourceClass:  classes[i%len(classes)],
			ProvisionState: "available",
			PowerState:     "power off",
			Shard:          "shard-" + strconv.Itoa(i%8),
		}
		switch r := rng.IntN(100); {
		case r < 30:
			nd.ProvisionState, nd.PowerState, nd.InstanceUUID = "active", "power on", UUID(rng)
		case r < 33:
			nd.ProvisionState, nd.TargetProvisionState = "cleaning", "available"
		case r < 35:
			nd.ProvisionState, nd.PowerState = "manageable", ""
		}
		if rng.IntN(100) < 5 {
			nd.Maintenance = true
		}
		for t := range rng.IntN(4) {
			nd.Traits = append(nd.Traits, fmt.Sprintf("CUSTOM_TRAIT_%d", (i+t)%7))
		}
		nodes[i] = nd
	}
	return nodes
}

// UUID draws a random version-4 UUID.
func UUID(rng *rand.Rand) string {
	a, b := rng.Uint64(), rng.Uint64()
	a = a&^(0xf<<12) | 4<<12
	b = b&^(3<<62) | 2<<62
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", a>>32, (a>>16)&0xffff, a&0xffff, b>>48, b&0xffffffffffff)
}
