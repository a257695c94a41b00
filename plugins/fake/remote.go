package main

import (
	"encoding/json"
	"fmt"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
)

// fetch replaces the world with the one the world service holds, when the
// config names one (world = "<service>"): a test harness can then change
// the world between and during calls of one running plugin. Each
// operation reads its own path, so the service can tell them apart:
// GET /nodes and GET /nodes?for=confirm_deleted answer {"nodes": [...]},
// GET /instances {"instances": [...]}, in the ABI's record shapes. Any
// status but 200 is the operation's error.
func (f *fake) fetch(op string) error {
	if f.cfg.World == "" {
		return nil
	}
	path := map[string]string{
		"list_nodes": "/nodes", "list_instances": "/instances", "confirm_deleted": "/nodes?for=confirm_deleted",
	}[op]
	resp, err := guest.HTTP(guest.HTTPRequest{Service: f.cfg.World, Path: path})
	if err != nil {
		return fmt.Errorf("world service: %w", err)
	}
	if resp.Status != 200 {
		return fmt.Errorf("world service: GET %s answered %d: %.200s", path, resp.Status, resp.Body)
	}
	if op == "list_instances" {
		err = f.decodeInstances(resp.Body)
	} else {
		err = f.decodeNodes(resp.Body)
	}
	if err != nil {
		return fmt.Errorf("world service: GET %s: %w", path, err)
	}
	return nil
}

// nodeFields are hostabi.Node's, in its JSON names. The host decodes
// (guest.Project): encoding/json in the guest made a 1,000-node world
// cost 75 ms per listing, too slow for a 10,000-cycle soak.
var nodeFields = []guest.Field{
	{Name: "uuid", Kind: guest.KindString}, {Name: "name", Kind: guest.KindString}, {Name: "resource_class", Kind: guest.KindString},
	{Name: "resources", Kind: guest.KindRaw}, {Name: "traits", Kind: guest.KindStrings}, {Name: "instance_uuid", Kind: guest.KindString},
	{Name: "maintenance", Kind: guest.KindBool}, {Name: "power_state", Kind: guest.KindString}, {Name: "provision_state", Kind: guest.KindString},
	{Name: "target_provision_state", Kind: guest.KindString}, {Name: "fault", Kind: guest.KindString}, {Name: "retired", Kind: guest.KindBool},
	{Name: "shard", Kind: guest.KindString}, {Name: "conductor_group", Kind: guest.KindString},
}

func (f *fake) decodeNodes(body []byte) error {
	r, err := guest.Project(body, guest.Projection{Array: "nodes", Fields: nodeFields})
	if err != nil {
		return err
	}
	nodes := make([]hostabi.Node, r.Len())
	for i := range nodes {
		n := &nodes[i]
		n.UUID, n.Name, n.ResourceClass = r.String(i, 0), r.String(i, 1), r.String(i, 2)
		if raw := r.String(i, 3); raw != "" && raw != "null" {
			if err := json.Unmarshal([]byte(raw), &n.Resources); err != nil {
				return fmt.Errorf("node %s: resources: %w", n.UUID, err)
			}
		}
		n.Traits, n.InstanceUUID, n.Maintenance = r.Strings(i, 4), r.String(i, 5), r.Bool(i, 6)
		n.PowerState, n.ProvisionState, n.TargetProvisionState = r.String(i, 7), r.String(i, 8), r.String(i, 9)
		n.Fault, n.Retired, n.Shard, n.ConductorGroup = r.String(i, 10), r.Bool(i, 11), r.String(i, 12), r.String(i, 13)
	}
	f.nodes = nodes
	return nil
}

func (f *fake) decodeInstances(body []byte) error {
	r, err := guest.Project(body, guest.Projection{Array: "instances",
		Fields: []guest.Field{{Name: "uuid", Kind: guest.KindString}, {Name: "node_uuid", Kind: guest.KindString}}})
	if err != nil {
		return err
	}
	in := make([]hostabi.Instance, r.Len())
	for i := range in {
		in[i] = hostabi.Instance{UUID: r.String(i, 0), NodeUUID: r.String(i, 1)}
	}
	f.instances = in
	return nil
}
