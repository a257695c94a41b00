package ops_test

import (
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/ops"
)

// The node page answers "why is this node not schedulable" with the
// source's values: provision_state = cleaning, not the code alone.
func TestNodePageSaysWhyWithValues(t *testing.T) {
	r := newRig(t, 3)
	r.src.set(func(s *source) {
		s.nodes[1].ProvisionState, s.nodes[1].TargetProvisionState = "cleaning", "available"
		s.nodes[2].ProvisionState, s.nodes[2].InstanceUUID = "active", "inst-2"
	})
	r.cycle()
	h := r.ops.Handler()
	_, html := get(t, h, "/node/"+nodeUUID(1))
	for _, s := range []string{
		`<strong id="verdict-line">not schedulable: provision_state = cleaning (not available)</strong>`,
		`<code id="decides">provision_state</code>`,
		`<li class="condition"><code>target_provision_state = available</code></li>`,
	} {
		if !strings.Contains(html, s) {
			t.Errorf("cleaning node's page lacks %q\n%s", s, html)
		}
	}
	_, html = get(t, h, "/node/"+nodeUUID(2))
	if !strings.Contains(html, "not schedulable: in use by instance inst-2") {
		t.Errorf("a node with an instance is not said to be in use by it:\n%s", html)
	}
	_, html = get(t, h, "/node/"+nodeUUID(0))
	if !strings.Contains(html, `<strong id="verdict-line">schedulable</strong>`) {
		t.Errorf("schedulable node:\n%s", html)
	}
}

// Every reserving condition is listed, the deciding one first; a node with
// explicit resources has no power or provision rules.
func TestExplainConditions(t *testing.T) {
	n := &hostabi.Node{ResourceClass: "gold", Maintenance: true, PowerState: "error", ProvisionState: "active"}
	x := ops.Explain(n, engine.Outcome{Kind: engine.KindUnchanged, Reserved: "power_state"}, []string{"i-1"})
	want := []string{"power_state = error", "maintenance = true", "provision_state = active (not available)", "instance i-1"}
	if strings.Join(x.Conditions, "|") != strings.Join(want, "|") || x.Verdict != "not schedulable: in use by instance i-1" {
		t.Errorf("got %+v", x)
	}
	vm := &hostabi.Node{Resources: map[string]hostabi.Resource{"VCPU": {}}, PowerState: "error"}
	if x := ops.Explain(vm, engine.Outcome{Kind: engine.KindUnchanged}, nil); len(x.Conditions) != 0 || x.Verdict != "schedulable" {
		t.Errorf("explicit resources: %+v", x)
	}
	q := ops.Explain(nil, engine.Outcome{Kind: engine.KindQuarantined, Reason: "no_class", Message: "no resource_class"}, nil)
	if q.Verdict != "quarantined (no_class): no resource_class" || q.Decides != "quarantined" {
		t.Errorf("quarantine: %+v", q)
	}
}
