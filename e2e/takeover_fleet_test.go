package e2e

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/testing/etcdtest"
	"github.com/rpengine/rpengine/internal/testing/ironictest"
)

// Take-overs at fleet scale, against the real Ironic (1,000 nodes,
// notifying on RabbitMQ), etcd and Placement: three engines divide the
// fleet; one is killed with SIGKILL, later another is paused with
// SIGSTOP, while this test changes the victim's nodes in Ironic every
// 1.5 s and a poller asks allocation_candidates as nova's scheduler does.
// Each time: every changed node is right in Placement, and every node of
// the victim owned by a survivor, within lease TTL + 10 s; no poll after
// that offers a node Ironic has in maintenance, manageable, deleted or of
// another class; the survivors' Placement requests stay within 1.5 a
// provider taken over. The paused engine, continued, writes nothing
// stale and gets its share back; no provider ends with two markers or
// none, none of a deleted node stays.
func TestTakeOverAtFleetScaleE2E(t *testing.T) {
	ttl := 10 * time.Second // coord.lease_ttl's default
	etcd := etcdtest.Start(t)
	fleetTakeOvers(t, newFleetRig(t, 1000, 3, ttl, "[coord]", fmt.Sprintf("etcd = [%q]", etcd)))
}

// The same take-overs with the engines coordinating through a real
// kube-apiserver (make test-kube): the same goals, Leases instead of etcd
// leases, the record in ConfigMaps.
func TestScaleOutKubeTakeOverAtFleetScale(t *testing.T) {
	ttl := 10 * time.Second
	kube, addr := startKubeFleet(t)
	fleetTakeOvers(t, newFleetRig(t, 1000, 3, ttl, kube.lines(t, addr, "/fleet/")...))
}

// fleetTakeOvers kills one engine, then pauses another, and checks the
// fleet once the paused one is back.
func fleetTakeOvers(t *testing.T, f *fleetRig) {
	f.takeOver(0, func(e *eventRig) { _ = e.cmd.Process.Kill(); <-e.exited }, "kill -9")
	f.takeOver(1, func(e *eventRig) { _ = e.cmd.Process.Signal(syscall.SIGSTOP) }, "SIGSTOP")
	paused := f.engines[1]
	_ = paused.cmd.Process.Signal(syscall.SIGCONT)
	f.dead[1] = false
	// Settled: a share for each, every node one owner, for 5 s running
	// (the listings of two markers are not one read: a hand-over between
	// them looks like a node with no owner).
	var since time.Time
	f.base.within(3*time.Minute, "the continued engine owns a share again, every node one owner, for 5 s", func() bool {
		if len(f.owned(1)) == 0 || len(f.wrong(f.nodes, nil)) > 0 {
			since = time.Time{}
		} else if since.IsZero() {
			since = time.Now()
		}
		return !since.IsZero() && time.Since(since) > 5*time.Second
	})
	f.checkFleet()
}

// fleetRig is a fleet of nodes of one class in a notifying Ironic and the
// engines dividing it through the coordinator coord (the [coord] lines:
// the backend and its address; the partitions and TTL are added here).
type fleetRig struct {
	t         *testing.T
	base      *eventRig // the bus, Ironic and Placement every engine uses
	engines   []*eventRig
	dead      []bool
	nodes     []string
	ttl       time.Duration
	rc, other string // the fleet's class in Placement; Ironic's class changed nodes move to
	mu        sync.Mutex
	state     map[string]string    // node → the last change: maintenance, manageable, deleted, reclassed, returned
	bad       map[string]time.Time // node → since when Ironic says it must not be offered as rc
}

func newFleetRig(t *testing.T, n, engines int, ttl time.Duration, coord ...string) *fleetRig {
	co := append(coord, "partitions = 12", fmt.Sprintf("lease_ttl = %q", ttl))
	f := &fleetRig{t: t, base: newEventRig(t, co...), ttl: ttl, state: map[string]string{}, bad: map[string]time.Time{}}
	class := fmt.Sprintf("fleet%x", os.Getpid())
	f.rc, f.other = "CUSTOM_"+strings.ToUpper(class), class+"-other"
	f.nodes = createNodes(t, f.base.ironic, n, class, class)
	ironictest.MarkAvailable(t, f.base.ironicURL, f.nodes)
	f.engines = []*eventRig{f.base}
	for i := 1; i < engines; i++ {
		f.engines = append(f.engines, f.base.peer(fmt.Sprintf("%s-%d", f.base.id, i), co...))
	}
	f.dead = make([]bool, engines)
	for _, e := range f.engines {
		e.start()
	}
	t.Cleanup(func() {
		for _, e := range f.engines {
			_ = e.cmd.Process.Signal(syscall.SIGCONT)
		}
	})
	took := f.base.within(5*time.Minute, "every node offered and owned, every engine on the bus", func() bool {
		owned := 0
		for i := range f.engines {
			owned += len(f.owned(i))
		}
		offered, _ := offeredNow(f.base.placement, f.rc)
		return owned == n && len(offered) == n && f.connected()
	})
	t.Logf("FIGURE %d engines: %d nodes offered and owned %.0f s after the start (shares %v)", engines, n, took.Seconds(), f.shares())
	return f
}

func (f *fleetRig) connected() bool {
	for i, e := range f.engines {
		if !f.dead[i] && e.metric("rpengine_events_connected") != 1 {
			return false
		}
	}
	return true
}

// owned lists the providers carrying engine i's owner marker.
func (f *fleetRig) owned(i int) []string {
	var out struct {
		Providers []struct{ UUID string } `json:"resource_providers"`
	}
	if placementGet(f.t, f.base.placement, "/resource_providers?required="+engine.OwnerTrait(f.engines[i].id), &out) != 200 {
		return nil
	}
	var us []string
	for _, p := range out.Providers {
		us = append(us, p.UUID)
	}
	return us
}

func (f *fleetRig) shares() []int {
	var s []int
	for i := range f.engines {
		s = append(s, len(f.owned(i)))
	}
	return s
}

// requests sums the Placement requests of the live engines.
func (f *fleetRig) requests() float64 {
	sum := 0.0
	for i, e := range f.engines {
		if !f.dead[i] {
			sum += e.metric("rpengine_placement_request_duration_seconds_count")
		}
	}
	return sum
}
