package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/testing/etcdtest"
	"github.com/rpengine/rpengine/internal/testing/ironictest"
)

// peer is a second engine beside r: the same bus, Ironic and Placement,
// its own id, queue, port and config.
func (r *eventRig) peer(id string, extra ...string) *eventRig {
	p := &eventRig{t: r.t, bus: r.bus, ironic: r.ironic, ironicURL: r.ironicURL, placement: r.placement}
	p.writeConfig(id, r.ironicURL, extra...)
	return p
}

// Events beside [coord], against the real Ironic, RabbitMQ, etcd and
// Placement: two engines divide the nodes; a trait Ironic announces
// reaches Placement through the holder's node sync (which records it in
// etcd first), and after that engine is killed (kill -9, its state file
// as good as lost) the survivor takes its nodes over and, once Ironic
// drops the trait, removes it: no stray, no marker of the dead engine.
func TestEventsWithCoordE2E(t *testing.T) {
	etcd := etcdtest.Start(t)
	co := []string{"[coord]", fmt.Sprintf("etcd = [%q]", etcd), "partitions = 8", `lease_ttl = "2s"`}
	a := newEventRig(t, co...)
	b := a.peer(a.id+"b", co...)
	var ns []string
	for i := range 6 {
		u := a.ironic.Create(t, ironictest.Spec{Name: fmt.Sprintf("co-%d-%s", i, a.id), ResourceClass: "baremetal"})
		a.ironic.Available(t, u)
		ns = append(ns, u)
	}
	a.start()
	b.start()
	marker := map[string]*eventRig{engine.OwnerTrait(a.id): a, engine.OwnerTrait(b.id): b}
	owner := func(u string) (*eventRig, []string) {
		p, ok := readProvider(t, a.placement, u)
		if !ok {
			return nil, nil
		}
		for _, tr := range p.Traits {
			if r := marker[tr]; r != nil {
				return r, p.Traits
			}
		}
		return nil, p.Traits
	}
	a.within(90*time.Second, "both engines connected and every node owned", func() bool {
		for _, u := range ns {
			if r, _ := owner(u); r == nil {
				return false
			}
		}
		return a.metric("rpengine_events_connected") == 1 && b.metric("rpengine_events_connected") == 1
	})
	time.Sleep(4 * time.Second)
	u := ns[0]
	holder, _ := owner(u)
	survivor := map[*eventRig]*eventRig{a: b, b: a}[holder]
	syncs := holder.metric("rpengine_node_syncs_total")
	a.ironic.Traits(t, u, []string{"CUSTOM_EVCOORD"})
	took := a.within(15*time.Second, "the announced trait in Placement", func() bool {
		_, ts := owner(u)
		return slices.Contains(ts, "CUSTOM_EVCOORD")
	})
	if holder.metric("rpengine_node_syncs_total") <= syncs {
		t.Fatal("no node sync on the engine holding the node: the trait came another way")
	}
	t.Logf("FIGURE trait reached Placement %.2f s after the Ironic call, by %s's node sync", took.Seconds(), holder.id)

	_ = holder.cmd.Process.Kill()
	<-holder.exited
	a.ironic.Traits(t, u, []string{})
	took = a.within(60*time.Second, "the survivor took the node over and dropped the trait", func() bool {
		r, ts := owner(u)
		return r == survivor && !slices.Contains(ts, "CUSTOM_EVCOORD")
	})
	t.Logf("FIGURE take-over after kill -9: node right in Placement %.1f s later", took.Seconds())
	for _, n := range ns {
		r, ts := owner(n)
		if r != survivor || slices.Contains(ts, engine.OwnerTrait(holder.id)) || slices.Contains(ts, "CUSTOM_EVCOORD") {
			t.Errorf("node %s after the take-over: traits %v; want %s's marker only", n, ts, survivor.id)
		}
	}
}
