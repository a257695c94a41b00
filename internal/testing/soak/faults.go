package soak

import (
	"math/rand/v2"
	"time"

	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// cyclePlan is everything that will go wrong in one cycle, drawn before
// it starts so that the draw does not depend on the engine's timing.
type cyclePlan struct {
	quiet bool
	// rng drives the decisions taken mid-cycle (which node an instance
	// lands on); its own stream keeps the main one reproducible.
	rng *rand.Rand

	// Source faults.
	nodesErr, instancesErr, confirmErr bool
	partial                            float64 // share of nodes a lying listing leaves out
	timeoutIn                          string  // operation that overruns its time limit
	trapIn                             string  // Wasm: operation the faulty plugin instance answers
	hostile                            int     // nodes whose record is garbled
	hostileKind                        string  // how
	filter                             bool    // the source filters by the requested scope

	// Mid-cycle world events: instances landing during the node listing
	// (the snapshot says free) and between the listings, and other
	// writers at the engine's n-th write.
	landDuring, landBetween int
	writers                 map[int]string

	// restart: "" or one of the restart kinds; at is the write it
	// strikes at (0: during the node listing).
	restart string
	at      int

	placement []plannedFault
}

type plannedFault struct {
	kind  string
	fault placementfake.Fault
}

// Salts separating the random streams.
const (
	planSalt     = 0x706c616e
	midCycleSalt = 0x6d6964
	phaseSalt    = 0x7068617365
)

// Restart kinds.
const (
	crashKeepState = "crash_keep_state"
	crashLoseState = "crash_lose_state"
	crashInListing = "crash_in_listing"
	gracefulStop   = "graceful_stop"
)

// planCycle draws the faults of one chaos cycle; a quiet cycle has none.
func (r *Runner) planCycle(quiet bool) *cyclePlan {
	// Streams of their own per cycle: the plan must not shift when the
	// world took another turn (a landing depends on the engine's timing).
	rng := rand.New(rand.NewPCG(r.cfg.Seed^planSalt, uint64(r.cycle)))
	p := &cyclePlan{quiet: quiet, rng: rand.New(rand.NewPCG(r.cfg.Seed^midCycleSalt, uint64(r.cycle))), writers: map[int]string{}}
	p.filter = rng.IntN(2) == 0
	chance := func(percent int) bool { return rng.IntN(1000) < percent*10 }
	// Other writers are not faults: the scheduler and operators work
	// in quiet phases too, mid-cycle included.
	if chance(30) {
		p.landDuring = 1 + rng.IntN(2)
	}
	if chance(20) {
		p.landBetween = 1
	}
	for range rng.IntN(3) {
		p.writers[1+rng.IntN(8)] = []string{"instance_lands", "foreign_trait", "generation_bump"}[rng.IntN(3)]
	}
	if quiet {
		return p
	}
	switch x := rng.IntN(100); {
	case x < 3:
		p.nodesErr = true
	case x < 5:
		p.instancesErr = true
	case x < 9:
		p.partial = 0.01 + rng.Float64()*0.2
	case x < 11:
		p.timeoutIn = []string{"list_nodes", "list_instances", "confirm_deleted"}[rng.IntN(3)]
	case x < 13:
		p.confirmErr = true
	case x < 17 && r.cfg.Mode == ModeWasm:
		p.trapIn = []string{"list_nodes", "list_instances", "confirm_deleted"}[rng.IntN(3)]
	}
	if chance(15) {
		p.hostile = 1 + rng.IntN(3)
		p.hostileKind = hostileKinds[rng.IntN(len(hostileKinds))]
	}
	switch x := rng.IntN(1000); {
	case x < 20:
		p.restart, p.at = crashKeepState, 1+rng.IntN(3)
	case x < 28:
		p.restart, p.at = crashLoseState, 1+rng.IntN(3)
	case x < 36:
		p.restart = crashInListing
	case x < 46:
		p.restart, p.at = gracefulStop, 1+rng.IntN(3)
	}
	for range rng.IntN(3) {
		p.placement = append(p.placement, r.drawFault(rng))
	}
	return p
}

// writePaths are the provider sub-resources the engine writes.
var writePaths = []string{"/resource_providers/*/traits", "/resource_providers/*/inventories", "/resource_providers/*/aggregates"}

// anyPath picks where a transport fault strikes: reads, writes, the
// listing, creates, or anything.
func anyPath(rng *rand.Rand) (method, path string) {
	switch rng.IntN(6) {
	case 0:
		return "GET", "/resource_providers"
	case 1:
		return "POST", "/resource_providers"
	case 2:
		return "GET", "/resource_providers/*/*"
	case 3:
		return "PUT", writePaths[rng.IntN(len(writePaths))]
	case 4:
		return "DELETE", "/resource_providers/*"
	}
	return "", ""
}

// faultWeights: conflicts most, timeouts least (each costs a client
// time limit of wall time).
var faultWeights = []struct {
	kind   string
	weight int
}{
	{"conflict_storm", 4}, {"status_5xx", 2}, {"dropped_connection", 2},
	{"slow_answers", 2}, {"provider_vanishes", 1}, {"timeout", 1},
}

// drawFault draws one Placement fault. Delays stay short except the
// timeouts, which just exceed the client's time limit.
func (r *Runner) drawFault(rng *rand.Rand) plannedFault {
	total := 0
	for _, fw := range faultWeights {
		total += fw.weight
	}
	x, kind := rng.IntN(total), ""
	for _, fw := range faultWeights {
		if x < fw.weight {
			kind = fw.kind
			break
		}
		x -= fw.weight
	}
	method, path := anyPath(rng)
	f := placementfake.Fault{Method: method, Path: path, Times: 1 + rng.IntN(4)}
	switch kind {
	case "conflict_storm":
		f = placementfake.Fault{Method: "PUT", Path: writePaths[rng.IntN(len(writePaths))], Conflict: true, Times: 1 + rng.IntN(8)}
	case "status_5xx":
		f.Status, f.Every = []int{500, 502, 503}[rng.IntN(3)], 1+rng.IntN(3)
	case "dropped_connection":
		f.Drop = true
	case "slow_answers":
		f.Delay, f.Every, f.Times = time.Duration(1+rng.IntN(8))*time.Millisecond, 1+rng.IntN(4), 30
	case "provider_vanishes":
		f = placementfake.Fault{Method: "PUT", Path: writePaths[rng.IntN(len(writePaths))], Vanish: true, Times: 1}
	case "timeout":
		f.Delay, f.Times = r.cfg.ClientTimeout+50*time.Millisecond, 1
	}
	return plannedFault{kind, f}
}

// countPlan adds the plan's faults to the report, by kind.
func (r *Runner) countPlan(p *cyclePlan) {
	inc := func(ok bool, kind string) {
		if ok {
			r.rep.Faults[kind]++
		}
	}
	inc(p.nodesErr, "source_list_nodes_error")
	inc(p.instancesErr, "source_list_instances_error")
	inc(p.confirmErr, "source_confirm_deleted_error")
	inc(p.partial > 0, "source_partial_listing_claimed_complete")
	inc(p.timeoutIn != "", "source_timeout_"+p.timeoutIn)
	inc(p.trapIn != "", "plugin_trap_"+p.trapIn)
	inc(p.restart != "", "restart_"+p.restart)
	for _, f := range p.placement {
		r.rep.Faults["placement_"+f.kind]++
	}
}
