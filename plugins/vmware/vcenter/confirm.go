package vcenter

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rpengine/rpengine/hostabi"
)

// ConfirmDeleted asks vCenter about each cluster by its reference: its
// ManagedObjectNotFound fault is the only proof of deletion. A UUID of
// another vCenter, or a question vCenter could not answer, is unknown.
func (c *Client) ConfirmDeleted(uuids []string) (deleted, present []string, err error) {
	ctx := context.Background()
	vc, err := c.connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	vcUUID := vc.ServiceContent.About.InstanceUuid
	for _, id := range uuids {
		ref, ok := ClusterRef(vcUUID, id)
		if !ok {
			continue
		}
		obj := types.ManagedObjectReference{Type: "ClusterComputeResource", Value: ref}
		_, err := methods.RetrievePropertiesEx(ctx, vc, &types.RetrievePropertiesEx{This: vc.ServiceContent.PropertyCollector,
			SpecSet: []types.PropertyFilterSpec{{ObjectSet: []types.ObjectSpec{{Obj: obj}},
				PropSet: []types.PropertySpec{{Type: obj.Type, PathSet: []string{"name"}}}}}})
		switch {
		case err == nil:
			present = append(present, id)
		case fault.Is(err, &types.ManagedObjectNotFound{}):
			deleted = append(deleted, id)
		default:
			c.log(4, fmt.Sprintf("cluster %s (%s): existence unknown: %v", ref, id, err))
		}
	}
	return deleted, present, nil
}

// ListInstances reports no consumers: a cluster's inventory does not
// depend on who uses it, and nova's allocations are Placement's own.
func (c *Client) ListInstances() ([]hostabi.Instance, error) { return []hostabi.Instance{}, nil }
