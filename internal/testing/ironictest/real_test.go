package ironictest

import (
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
)

// The harness starts a working Ironic and every helper reaches the state
// it promises.
func TestStartRealAndHelpers(t *testing.T) {
	url := StartReal(t)
	c := NewClient(t, url)
	id := c.Create(t, Spec{Name: "h-1", ResourceClass: "baremetal-gold", Shard: "s1"})
	if n := c.Get(t, id); n.ProvisionState != "enroll" || n.PowerState != "" || n.Shard != "s1" {
		t.Fatalf("created: %+v", n)
	}
	c.Available(t, id)
	c.Traits(t, id, []string{"CUSTOM_GOLD"})
	c.Maintenance(t, id, true)
	c.Maintenance(t, id, false)
	c.SetShard(t, id, "s2")
	c.Deploy(t, id, "11111111-2222-4333-8444-555555555555")
	n := c.Get(t, id)
	if n.ProvisionState != "active" || n.InstanceUUID == "" || n.PowerState != "power on" || n.Shard != "s2" ||
		len(n.Traits) != 1 {
		t.Fatalf("deployed: %+v", n)
	}
	c.Undeploy(t, id)
	c.Provision(t, id, nodes.TargetManage, "manageable")
	c.Delete(t, id)
}
