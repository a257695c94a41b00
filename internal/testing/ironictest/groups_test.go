package ironictest

import (
	"testing"
)

// With a conductor per group, Ironic takes a node into either group and
// the other group's conductor drives it (manage, provide, power), and it
// moves between groups while available.
func TestStartRealGroups(t *testing.T) {
	url := StartRealGroups(t, "rack-b")
	c := NewClient(t, url)
	a := c.Create(t, Spec{Name: "g-a", ResourceClass: "baremetal-gold"})
	b := c.Create(t, Spec{Name: "g-b", ResourceClass: "baremetal-gold"})
	c.Set(t, b, "/conductor_group", "rack-b")
	c.Available(t, a)
	c.Available(t, b)
	c.Set(t, a, "/conductor_group", "rack-b")
	c.Set(t, b, "/conductor_group", "")
	for id, want := range map[string]string{a: "rack-b", b: ""} {
		if n := c.Get(t, id); n.ConductorGroup != want || n.ProvisionState != "available" || n.PowerState != "power on" {
			t.Fatalf("node %s: group %q, %s, %s; want group %q, available, power on", id, n.ConductorGroup, n.ProvisionState, n.PowerState, want)
		}
	}
	c.Maintenance(t, a, true) // the rack-b conductor still answers for it
}
