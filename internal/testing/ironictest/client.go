package ironictest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
)

// Microversion is what the helpers speak: Ironic 21.4's newest (shards).
const Microversion = "1.82"

// stateTimeout bounds one state change; fake hardware takes well under a
// second, but a loaded machine may be slow.
const stateTimeout = 60 * time.Second

// Client changes nodes of a real Ironic, failing the test on any error.
type Client struct {
	sc *gophercloud.ServiceClient
}

// NewClient returns a client for the Ironic at url (as StartReal returns).
func NewClient(t testing.TB, url string) *Client {
	t.Helper()
	sc, err := noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: url + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	sc.Microversion = Microversion
	return &Client{sc: sc}
}

// Spec describes a node to create.
type Spec struct {
	Name          string
	ResourceClass string
	Shard         string // "" leaves it unsharded
}

// Create enrolls a fake-hardware node and returns its uuid. It is in
// "enroll" with power_state null, as real nodes start.
func (c *Client) Create(t testing.TB, s Spec) string {
	t.Helper()
	n, err := nodes.Create(context.Background(), c.sc, nodes.CreateOpts{
		Name: s.Name, Driver: "fake-hardware", ResourceClass: s.ResourceClass,
		Properties: map[string]any{"cpus": 16, "memory_mb": 65536, "local_gb": 500, "cpu_arch": "x86_64"},
	}).Extract()
	if err != nil {
		t.Fatalf("create node %s: %v", s.Name, err)
	}
	if s.Shard != "" {
		c.patch(t, n.UUID, nodes.AddOp, "/shard", s.Shard)
	}
	return n.UUID
}

// Available takes an enrolled node through manage and provide (automated
// cleaning is off) and powers it on: fake power leaves power_state null,
// which makes a node unschedulable.
func (c *Client) Available(t testing.TB, uuid string) {
	t.Helper()
	c.Provision(t, uuid, nodes.TargetManage, "manageable")
	c.Provision(t, uuid, nodes.TargetProvide, "available")
	c.PowerOn(t, uuid)
}

// Provision requests target and waits for state with no target pending.
func (c *Client) Provision(t testing.TB, uuid string, target nodes.TargetProvisionState, state string) {
	t.Helper()
	err := nodes.ChangeProvisionState(context.Background(), c.sc, uuid, nodes.ProvisionStateOpts{Target: target}).ExtractErr()
	if err != nil {
		t.Fatalf("node %s: provision %s: %v", uuid, target, err)
	}
	c.wait(t, uuid, fmt.Sprintf("provision_state %s", state), func(n *nodes.Node) bool {
		return n.ProvisionState == state && n.TargetProvisionState == ""
	})
}

// Deploy sets the instance and deploys an available node (fake deploy):
// active with instance_uuid set, as Nova leaves it.
func (c *Client) Deploy(t testing.TB, uuid, instance string) {
	t.Helper()
	c.patch(t, uuid, nodes.AddOp, "/instance_uuid", instance)
	c.Provision(t, uuid, nodes.TargetActive, "active")
}

// Rescue puts an active node into the stable "rescue" state (fake rescue).
func (c *Client) Rescue(t testing.TB, uuid string) {
	t.Helper()
	err := nodes.ChangeProvisionState(context.Background(), c.sc, uuid,
		nodes.ProvisionStateOpts{Target: nodes.TargetRescue, RescuePassword: "e2e"}).ExtractErr()
	if err != nil {
		t.Fatalf("node %s: rescue: %v", uuid, err)
	}
	c.wait(t, uuid, "rescue", func(n *nodes.Node) bool { return n.ProvisionState == "rescue" && n.TargetProvisionState == "" })
}

// Retire marks a node retired (API 1.61): it must take no new instance.
// Ironic refuses it in "available" (409).
func (c *Client) Retire(t testing.TB, uuid string) {
	t.Helper()
	c.patch(t, uuid, nodes.AddOp, "/retired", true)
}

// Undeploy tears an active node down to available (no cleaning) and
// clears its instance.
func (c *Client) Undeploy(t testing.TB, uuid string) {
	t.Helper()
	c.Provision(t, uuid, nodes.TargetDeleted, "available")
	c.patch(t, uuid, nodes.RemoveOp, "/instance_uuid", nil)
}

// PowerOn powers a node on and waits for it.
func (c *Client) PowerOn(t testing.TB, uuid string) {
	t.Helper()
	err := nodes.ChangePowerState(context.Background(), c.sc, uuid, nodes.PowerStateOpts{Target: nodes.PowerOn}).ExtractErr()
	if err != nil {
		t.Fatalf("node %s: power on: %v", uuid, err)
	}
	c.wait(t, uuid, "power on", func(n *nodes.Node) bool { return n.PowerState == "power on" })
}

// Maintenance sets or clears maintenance mode.
func (c *Client) Maintenance(t testing.TB, uuid string, on bool) {
	t.Helper()
	var err error
	if on {
		err = nodes.SetMaintenance(context.Background(), c.sc, uuid, nodes.MaintenanceOpts{Reason: "e2e"}).ExtractErr()
	} else {
		err = nodes.UnsetMaintenance(context.Background(), c.sc, uuid).ExtractErr()
	}
	if err != nil {
		t.Fatalf("node %s: maintenance %v: %v", uuid, on, err)
	}
	c.wait(t, uuid, fmt.Sprintf("maintenance %v", on), func(n *nodes.Node) bool { return n.Maintenance == on })
}

// Traits replaces a node's traits (gophercloud has no call for this one).
func (c *Client) Traits(t testing.TB, uuid string, traits []string) {
	t.Helper()
	_, err := c.sc.Put(context.Background(), c.sc.ServiceURL("nodes", uuid, "traits"),
		map[string]any{"traits": traits}, nil, &gophercloud.RequestOpts{OkCodes: []int{204}})
	if err != nil {
		t.Fatalf("node %s: set traits %v: %v", uuid, traits, err)
	}
}

// SetShard moves a node to shard ("" removes it from any shard).
func (c *Client) SetShard(t testing.TB, uuid, shard string) {
	t.Helper()
	if shard == "" {
		c.patch(t, uuid, nodes.RemoveOp, "/shard", nil)
		return
	}
	c.patch(t, uuid, nodes.AddOp, "/shard", shard)
}

// Set adds or replaces the value at a node's JSON path: "/owner",
// "/conductor_group", "/properties/rack", "/extra/row".
func (c *Client) Set(t testing.TB, uuid, path string, value any) {
	t.Helper()
	c.patch(t, uuid, nodes.AddOp, path, value)
}

// SetResourceClass changes a node's resource class (Ironic allows it in
// enroll, manageable and available only).
func (c *Client) SetResourceClass(t testing.TB, uuid, rc string) {
	t.Helper()
	c.patch(t, uuid, nodes.AddOp, "/resource_class", rc)
}

// SetInstance sets (or, with "", removes) a node's instance_uuid.
func (c *Client) SetInstance(t testing.TB, uuid, instance string) {
	t.Helper()
	if instance == "" {
		c.patch(t, uuid, nodes.RemoveOp, "/instance_uuid", nil)
		return
	}
	c.patch(t, uuid, nodes.AddOp, "/instance_uuid", instance)
}

// Delete deletes a node (it must be available, manageable or enroll).
func (c *Client) Delete(t testing.TB, uuid string) {
	t.Helper()
	if err := nodes.Delete(context.Background(), c.sc, uuid).ExtractErr(); err != nil {
		t.Fatalf("delete node %s: %v", uuid, err)
	}
}

// Get returns the node as Ironic shows it.
func (c *Client) Get(t testing.TB, uuid string) *nodes.Node {
	t.Helper()
	n, err := nodes.Get(context.Background(), c.sc, uuid).Extract()
	if err != nil {
		t.Fatalf("get node %s: %v", uuid, err)
	}
	return n
}

func (c *Client) patch(t testing.TB, uuid string, op nodes.UpdateOp, path string, value any) {
	t.Helper()
	_, err := nodes.Update(context.Background(), c.sc, uuid, nodes.UpdateOpts{
		nodes.UpdateOperation{Op: op, Path: path, Value: value},
	}).Extract()
	if err != nil {
		t.Fatalf("node %s: %s %s %v: %v", uuid, op, path, value, err)
	}
}

// wait polls the node until done or the state timeout.
func (c *Client) wait(t testing.TB, uuid, what string, done func(*nodes.Node) bool) {
	t.Helper()
	deadline := time.Now().Add(stateTimeout)
	for {
		n := c.Get(t, uuid)
		if done(n) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s: not %s after %s (provision %q -> %q, power %q, last error %q)",
				uuid, what, stateTimeout, n.ProvisionState, n.TargetProvisionState, n.PowerState, n.LastError)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
