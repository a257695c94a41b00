package placementfake

import (
	_ "embed"
	"math/rand/v2"
	"strings"
)

// standardTraits is os_traits 2.9.0 (what Placement 8.0 on Debian 12
// ships), written by:
//
//	/usr/bin/python3 -c 'import os_traits; print("\n".join(sorted(os_traits.get_traits())))'
//
//go:embed standard_traits.txt
var standardTraits string

// standardClasses is os_resource_classes 1.1.0 STANDARDS.
var standardClasses = []string{
	"VCPU", "MEMORY_MB", "DISK_GB", "PCI_DEVICE", "SRIOV_NET_VF", "NUMA_SOCKET",
	"NUMA_CORE", "NUMA_THREAD", "NUMA_MEMORY_MB", "IPV4_ADDRESS", "VGPU",
	"VGPU_DISPLAY_HEAD", "NET_BW_EGR_KILOBIT_PER_SEC", "NET_BW_IGR_KILOBIT_PER_SEC",
	"PCPU", "MEM_ENCRYPTION_CONTEXT", "FPGA", "PGPU",
	"NET_PACKET_RATE_KILOPACKET_PER_SEC", "NET_PACKET_RATE_EGR_KILOPACKET_PER_SEC",
	"NET_PACKET_RATE_IGR_KILOPACKET_PER_SEC",
}

// Inventory is one resource class on a provider, with the real defaults
// filled in.
type Inventory struct {
	Total           int64   `json:"total"`
	Reserved        int64   `json:"reserved"`
	MinUnit         int64   `json:"min_unit"`
	MaxUnit         int64   `json:"max_unit"`
	StepSize        int64   `json:"step_size"`
	AllocationRatio float64 `json:"allocation_ratio"`
}

// capacity is what allocations may use, as placement computes it.
func (inv Inventory) capacity() float64 {
	return float64(inv.Total-inv.Reserved) * inv.AllocationRatio
}

type provider struct {
	uuid, name string
	seq        int64 // creation order: the real server lists by database id
	gen        int64
	inv        map[string]Inventory
	traits     map[string]bool
	aggs       map[string]bool
	usage      map[string]int64            // class -> used
	consumers  map[string]map[string]int64 // consumer -> class -> used
}

type consumer struct {
	uuid, project, user, kind string
	gen                       int64
	allocs                    map[string]map[string]int64 // provider -> class -> used
}

type state struct {
	rng       *rand.Rand
	seq       int64
	providers map[string]*provider
	byName    map[string]*provider
	classes   map[string]bool
	traits    map[string]bool
	consumers map[string]*consumer
	issued    map[int64]bool // every generation ever made, so none repeats
	returned  map[int64]bool // every generation ever sent to a client
}

func newState(seed int64) *state {
	st := &state{
		rng:       rand.New(rand.NewPCG(uint64(seed), 0x706c6163656d656e)),
		providers: map[string]*provider{},
		byName:    map[string]*provider{},
		classes:   map[string]bool{},
		traits:    map[string]bool{},
		consumers: map[string]*consumer{},
		issued:    map[int64]bool{},
		returned:  map[int64]bool{},
	}
	for _, c := range standardClasses {
		st.classes[c] = true
	}
	for _, t := range strings.Fields(standardTraits) {
		st.traits[t] = true
	}
	return st
}

// newGen makes a generation nobody has seen: random, never 0, never the
// previous value plus one, spread over small, int32, 2^53 and 2^62 ranges
// so that clients storing it in an int32 or a float64 break here.
func (st *state) newGen(prev int64) int64 {
	limits := []int64{1000, 1 << 31, 1 << 53, 1 << 62}
	for {
		g := 1 + st.rng.Int64N(limits[st.rng.IntN(len(limits))])
		if g != prev+1 && g != prev && !st.issued[g] {
			st.issued[g] = true
			return g
		}
	}
}

func (st *state) bump(p *provider) { p.gen = st.newGen(p.gen) }

// sent marks a generation as handed to a client.
func (st *state) sent(g int64) int64 {
	st.returned[g] = true
	return g
}

func (st *state) addProvider(uuid, name string) *provider {
	st.seq++
	p := &provider{
		uuid: uuid, name: name, seq: st.seq, gen: st.newGen(-2),
		inv: map[string]Inventory{}, traits: map[string]bool{}, aggs: map[string]bool{},
		usage: map[string]int64{}, consumers: map[string]map[string]int64{},
	}
	st.providers[uuid] = p
	st.byName[name] = p
	return p
}

// removeProvider deletes a provider and, for out-of-band deletes, the
// allocations against it (a real operator would have had to do that first).
func (st *state) removeProvider(p *provider) {
	for cu := range p.consumers {
		if c := st.consumers[cu]; c != nil {
			delete(c.allocs, p.uuid)
			if len(c.allocs) == 0 {
				delete(st.consumers, cu)
			}
		}
	}
	delete(st.providers, p.uuid)
	delete(st.byName, p.name)
}

// setAllocations replaces a consumer's allocations. It bumps the providers
// named in the new set (or, when clearing, in the old set), as the real
// _set_allocations does, and the consumer's generation.
func (st *state) setAllocations(c *consumer, allocs map[string]map[string]int64) {
	touched := allocs
	if len(allocs) == 0 {
		touched = c.allocs
	}
	st.release(c)
	for pu, res := range allocs {
		p := st.providers[pu]
		for rc, n := range res {
			p.usage[rc] += n
		}
		p.consumers[c.uuid] = res
	}
	for pu := range touched {
		st.bump(st.providers[pu])
	}
	c.allocs = allocs
	c.gen = st.newGen(c.gen)
	if len(allocs) == 0 {
		delete(st.consumers, c.uuid)
	}
}

// dropConsumer removes a consumer and its usage without bumping provider
// generations: DELETE /allocations/{c} does not bump them on the real server.
func (st *state) dropConsumer(c *consumer) {
	st.release(c)
	delete(st.consumers, c.uuid)
}

// release takes a consumer's usage off its providers.
func (st *state) release(c *consumer) {
	for pu, res := range c.allocs {
		p := st.providers[pu]
		for rc, n := range res {
			p.usage[rc] -= n
		}
		delete(p.consumers, c.uuid)
	}
}
