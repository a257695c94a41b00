package soak

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/rpengine/rpengine/hostabi"
)

// The value space of the world. Classes and traits are chosen so that the
// oracle (expect.go) needs no copy of the engine's rules to predict them.
var (
	classes     = []string{"baremetal-gold", "baremetal-silver", "gpu.a100"}
	nodeTraits  = []string{"CUSTOM_GOLD", "CUSTOM_FAST", "CUSTOM_RAID", "HW_CPU_X86_AVX2"}
	foreignPool = []string{"CUSTOM_OPERATOR_A", "CUSTOM_OPERATOR_B", "COMPUTE_STATUS_DISABLED"}
	foreignAggs = []string{"f0000000-0000-4000-8000-00000000000a", "f0000000-0000-4000-8000-00000000000b"}
	shardsIn    = []string{"a", "b"} // the engine's scope
	shardOut    = "c"
)

// wnode is one node of the world: the record the source reports, plus
// what the harness needs to judge the engine.
type wnode struct {
	hostabi.Node
	enrolled bool
	// goneSince is the first cycle that could see the node gone (valid
	// while !enrolled); a provider delete before goneSince+1 lacks proof.
	goneSince int
	// everInScope: the engine may own a provider for it.
	everInScope bool
	// traitsEver holds every trait the node ever reported: after a crash
	// the engine may not know it added one (see tolerated in checks.go).
	traitsEver map[string]bool
	// hostile, when set, is how the source garbles this node's record
	// this cycle (bad input, chaos phases only).
	hostile string
}

func (n *wnode) inScope() bool { return n.enrolled && n.Shard != shardOut }

// winstance is a consumer the world's scheduler placed.
type winstance struct {
	uuid, node string
	// class is what its allocation consumes; "" once the allocation is
	// gone (its provider was deleted out of band, allocations and all).
	class string
}

// Cloud is the harness's model of the cloud: Ironic's nodes, nova's
// instances. It is evolved only by the seeded RNG.
type Cloud struct {
	rng       *rand.Rand
	nodes     []*wnode // stable order: events pick by index
	byUUID    map[string]*wnode
	instances map[string]*winstance
	nextID    int
}

func newCloud(seed uint64, n int) *Cloud {
	w := &Cloud{
		rng:       rand.New(rand.NewPCG(seed, 0x736f616b)),
		byUUID:    map[string]*wnode{},
		instances: map[string]*winstance{},
	}
	for range n {
		w.enroll("available")
	}
	return w
}

// enroll adds a brand-new node.
func (w *Cloud) enroll(state string) *wnode {
	w.nextID++
	shard := shardsIn[w.rng.IntN(len(shardsIn))]
	if w.rng.IntN(10) == 0 {
		shard = shardOut
	}
	n := &wnode{
		Node: hostabi.Node{
			UUID:           fmt.Sprintf("5a000000-0000-4000-8000-%012d", w.nextID),
			Name:           fmt.Sprintf("node-%05d", w.nextID),
			ResourceClass:  classes[w.rng.IntN(len(classes))],
			PowerState:     "power off",
			ProvisionState: state,
			Shard:          shard,
		},
		enrolled: true, traitsEver: map[string]bool{},
	}
	if w.rng.IntN(3) == 0 {
		w.setTraits(n, []string{nodeTraits[w.rng.IntN(len(nodeTraits))]})
	}
	n.everInScope = n.inScope()
	w.nodes = append(w.nodes, n)
	w.byUUID[n.UUID] = n
	return n
}

func (w *Cloud) setTraits(n *wnode, ts []string) {
	slices.Sort(ts)
	n.Traits = slices.Compact(ts)
	for _, t := range n.Traits {
		n.traitsEver[t] = true
	}
}

// pick returns a random node satisfying ok, or nil after a few misses.
func (w *Cloud) pick(ok func(*wnode) bool) *wnode { return w.pickWith(w.rng, ok) }

func (w *Cloud) pickWith(rng *rand.Rand, ok func(*wnode) bool) *wnode {
	for range 20 {
		if n := w.nodes[rng.IntN(len(w.nodes))]; ok(n) {
			return n
		}
	}
	return nil
}

// listing is what an honest source reports: every enrolled node, with
// hostile garbling applied. Records are copies: the engine may keep them.
func (w *Cloud) listing() []hostabi.Node {
	out := make([]hostabi.Node, 0, len(w.nodes))
	for _, n := range w.nodes {
		if !n.enrolled {
			continue
		}
		out = append(out, garble(n)...)
	}
	return out
}

func (w *Cloud) instanceList() []hostabi.Instance {
	out := make([]hostabi.Instance, 0, len(w.instances))
	for _, u := range slices.Sorted(maps.Keys(w.instances)) {
		in := w.instances[u]
		out = append(out, hostabi.Instance{UUID: in.uuid, NodeUUID: in.node})
	}
	return out
}

// confirm answers ConfirmDeleted truthfully: gone means not enrolled.
func (w *Cloud) confirm(uuids []string) (deleted, present []string) {
	for _, u := range uuids {
		if n := w.byUUID[strings.ToLower(u)]; n != nil && n.enrolled {
			present = append(present, u)
		} else {
			deleted = append(deleted, u)
		}
	}
	return deleted, present
}

// garble turns a node into what a hostile or broken source would send.
// Only the kinds the soak keeps running with are here; the full corpus is
// in badinput_test.go.
func garble(n *wnode) []hostabi.Node {
	rec := n.Node
	rec.Traits = slices.Clone(n.Traits)
	switch n.hostile {
	case "":
	case hostileEmptyClass:
		rec.ResourceClass = ""
	case hostileContradictory:
		rec.Resources = map[string]hostabi.Resource{"VCPU": {Total: 8}}
	case hostileDuplicate:
		twin := rec
		twin.Maintenance = !rec.Maintenance
		return []hostabi.Node{rec, twin}
	case hostileBadUUID:
		rec.UUID = "node-" + rec.UUID[len(rec.UUID)-6:]
	case hostileUpperUUID:
		rec.UUID = strings.ToUpper(rec.UUID)
	case hostileBadTraits:
		rec.Traits = append(rec.Traits, "lower-case", strings.Repeat("X", 300))
	}
	return []hostabi.Node{rec}
}

// Hostile record kinds the soak injects. Quarantining ones leave the
// node's provider untouched; the others must still be written.
const (
	hostileEmptyClass    = "empty_class"
	hostileContradictory = "class_and_resources"
	hostileDuplicate     = "duplicate"
	hostileBadUUID       = "bad_uuid"
	hostileUpperUUID     = "upper_case_uuid"
	hostileBadTraits     = "invalid_traits"
)

var hostileKinds = []string{hostileEmptyClass, hostileContradictory, hostileDuplicate,
	hostileBadUUID, hostileUpperUUID, hostileBadTraits}
