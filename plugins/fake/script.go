package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rpengine/rpengine/hostabi"
)

// step is one scripted change to the world, so tests can replay races
// through the real Wasm plugin: [[plugin.config.step]] tables.
type step struct {
	// Cycle is the list_nodes call (1-based) the step belongs to.
	Cycle int `json:"cycle"`
	// When is "before" (applied before that call's node snapshot) or
	// "during" (after the snapshot, so the nodes returned do not show it
	// but the instance listing that follows does: nova bug 1841481).
	When string `json:"when"`

	Land        *hostabi.Instance `json:"land"`        // an instance lands on a node
	Delete      string            `json:"delete"`      // a node is deleted
	Enroll      *hostabi.Node     `json:"enroll"`      // a node is enrolled (again)
	Maintenance *toggle           `json:"maintenance"` // maintenance on or off
}

type toggle struct {
	UUID string `json:"uuid"`
	On   bool   `json:"on"`
}

func checkSteps(steps []step) error {
	for i, s := range steps {
		if s.Cycle < 1 || (s.When != "before" && s.When != "during") {
			return fmt.Errorf("fake plugin config: step %d: cycle must be >= 1 and when \"before\" or \"during\"", i+1)
		}
	}
	return nil
}

// advance applies the steps of cycle at moment when.
func (f *fake) advance(cycle int, when string) {
	for _, s := range f.cfg.Step {
		if s.Cycle != cycle || s.When != when {
			continue
		}
		if s.Land != nil {
			f.land(*s.Land)
		}
		if s.Delete != "" {
			f.nodes = slices.DeleteFunc(f.nodes, func(n hostabi.Node) bool { return strings.EqualFold(n.UUID, s.Delete) })
			f.instances = slices.DeleteFunc(f.instances, func(in hostabi.Instance) bool { return strings.EqualFold(in.NodeUUID, s.Delete) })
		}
		if s.Enroll != nil {
			f.nodes = append(f.nodes, *s.Enroll)
		}
		if s.Maintenance != nil {
			f.edit(s.Maintenance.UUID, func(n *hostabi.Node) { n.Maintenance = s.Maintenance.On })
		}
	}
}

func (f *fake) land(in hostabi.Instance) {
	f.instances = append(f.instances, in)
	f.edit(in.NodeUUID, func(n *hostabi.Node) {
		n.InstanceUUID, n.ProvisionState, n.PowerState = in.UUID, "active", "power on"
	})
}

// edit changes a node in place; the slices handed out before are copies.
func (f *fake) edit(uuid string, change func(*hostabi.Node)) {
	for i := range f.nodes {
		if strings.EqualFold(f.nodes[i].UUID, uuid) {
			change(&f.nodes[i])
		}
	}
}
