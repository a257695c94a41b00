package ops

import (
	"strconv"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/baremetal"
	"github.com/rpengine/rpengine/hostabi"
)

// Explanation answers "why is this node where it is" with the source's
// values, not the reason code alone. `engine explain` prints it and the
// node page shows it.
type Explanation struct {
	// Verdict is one line: "schedulable", "not schedulable: in use by
	// instance …", "not schedulable: provision_state = cleaning", or what
	// keeps the node from being synced.
	Verdict string `json:"verdict"`
	// Decides is the rule the engine applied (a reservation reason or an
	// outcome kind), Conditions every reserving condition the node meets,
	// with its value, the deciding one first.
	Decides    string   `json:"decides"`
	Conditions []string `json:"conditions,omitempty"`
	// Instances are the consumers the source says occupy the node.
	Instances []string `json:"instances,omitempty"`
}

// instancesOf is the node's own instance_uuid and the source's listed
// instances on it, without repeats.
func instancesOf(n *hostabi.Node, listed []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, in := range append([]string{n.InstanceUUID}, listed...) {
		if in != "" && !seen[in] {
			seen[in] = true
			out = append(out, in)
		}
	}
	return out
}

// Explain explains outcome o of node n (nil when the source did not list
// it); listed are the source's instances on the node. A node that holds
// an instance is said to be in use by it, whichever rule comes first.
func Explain(n *hostabi.Node, o engine.Outcome, listed []string) Explanation {
	var x Explanation
	var cs []baremetal.Condition // the reservation matrix's rules (engine/baremetal)
	if n != nil {
		x.Instances = instancesOf(n, listed)
		cs = baremetal.Conditions(*n, x.Instances)
	}
	for _, c := range cs { // the deciding condition first
		if string(c.Reason) == o.Reserved {
			x.Conditions = append(x.Conditions, c.Text)
		}
	}
	for _, c := range cs {
		if string(c.Reason) != o.Reserved {
			x.Conditions = append(x.Conditions, c.Text)
		}
	}
	switch o.Kind {
	case engine.KindCreated, engine.KindUpdated, engine.KindUnchanged:
		x.Decides = o.Reserved
		switch {
		case o.Reserved == "":
			x.Decides, x.Verdict = "schedulable", "schedulable"
		case len(x.Instances) > 0:
			x.Verdict = "not schedulable: in use by instance " + x.Instances[0]
		case len(x.Conditions) > 0:
			x.Verdict = "not schedulable: " + x.Conditions[0]
		default:
			x.Verdict = "not schedulable: " + o.Reserved
		}
	default:
		x.Decides = string(o.Kind)
		x.Verdict = verdictOf(o)
	}
	return x
}

// verdictOf says what keeps a node from being synced as it is.
func verdictOf(o engine.Outcome) string {
	s := string(o.Kind)
	if o.Reason != "" {
		s += " (" + o.Reason + ")"
	}
	if o.ProofsNeeded > 0 {
		s += ": proof " + strconv.Itoa(o.Proof) + " of " + strconv.Itoa(o.ProofsNeeded)
	}
	if o.Message != "" {
		s += ": " + o.Message
	}
	return s
}
