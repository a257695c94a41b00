package engine_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/hostabi"
)

// A cycle takes the providers intend found settled as they are, without
// a second look (sync.go, isSettled); with that turned off it looks at
// each. Their reports and the observer's events must not differ,
// whatever changed: nothing, a node's data, another writer's rewrite
// (the listed generation moves), a trait removed behind the engine's
// back, a provider deleted behind its back, a node more.
func TestSettledProvidersReportAsSynced(t *testing.T) {
	changes := []func(r *rig){
		func(*rig) {},
		func(r *rig) { r.src.set(func(s *source) { s.nodes[3].Traits = []string{"CUSTOM_GPU"} }) },
		func(r *rig) { r.src.set(func(s *source) { s.nodes[5].Maintenance = true }) },
		func(r *rig) { r.fake.BumpGeneration(nodeUUID(7)) },
		func(r *rig) { r.fake.RemoveTrait(nodeUUID(8), "COMPUTE_NODE") },
		func(r *rig) { r.fake.DeleteProvider(nodeUUID(9)) },
		func(r *rig) {
			r.src.set(func(s *source) {
				s.nodes = append(s.nodes, hostabi.Node{UUID: nodeUUID(99), ResourceClass: "baremetal-gold"})
			})
		},
		func(*rig) {},
	}
	var reports [2][]engine.Report
	var events [2][]engine.ProviderOutcome
	defer engine.JudgeAtIntend(true)
	for run, judged := range []bool{true, false} {
		engine.JudgeAtIntend(judged)
		r := newRig(t, 12)
		r.opts.Concurrency = 1 // the same requests in the same order: the same generations
		r.opts.Observer = engine.ObserverFunc(func(ev engine.Event) {
			if o, ok := ev.(engine.ProviderOutcome); ok {
				events[run] = append(events[run], o)
			}
		})
		r.restart()
		r.cleanCycle()
		for _, change := range changes {
			change(r)
			rep := r.cleanCycle()
			rep.DurationMS, rep.PlacementMS, rep.PluginMS = 0, 0, 0
			reports[run] = append(reports[run], rep)
		}
	}
	for i := range changes {
		fast, slow := reports[0][i], reports[1][i]
		if !reflect.DeepEqual(fast.Outcomes, slow.Outcomes) || fast.Unchanged != slow.Unchanged || fast.Updated != slow.Updated ||
			fast.Created != slow.Created || fast.PlacementRequests != slow.PlacementRequests {
			t.Fatalf("change %d: judged at intend %d unchanged, %d updated, %d created, %d requests, %+v;\nlooked at %d, %d, %d, %d, %+v",
				i, fast.Unchanged, fast.Updated, fast.Created, fast.PlacementRequests, fast.Outcomes,
				slow.Unchanged, slow.Updated, slow.Created, slow.PlacementRequests, slow.Outcomes)
		}
	}
	slices.SortStableFunc(events[0], func(a, b engine.ProviderOutcome) int { return strings.Compare(a.Outcome.Node, b.Outcome.Node) })
	slices.SortStableFunc(events[1], func(a, b engine.ProviderOutcome) int { return strings.Compare(a.Outcome.Node, b.Outcome.Node) })
	if len(events[0]) != len(events[1]) {
		t.Fatalf("the observer was told %d outcomes judged at intend, %d looked at", len(events[0]), len(events[1]))
	}
	for i := range events[0] {
		if !reflect.DeepEqual(events[0][i], events[1][i]) {
			t.Fatalf("the observer was told %#v judged at intend,\n%#v looked at", events[0][i], events[1][i])
		}
	}
	if reports[0][0].Unchanged != 12 || reports[0][1].Updated != 1 {
		t.Fatalf("idle: %d unchanged; one trait: %d updated", reports[0][0].Unchanged, reports[0][1].Updated)
	}
}
