package vcenter

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rpengine/rpengine/hostabi"
)

// The properties read, per type: only what the arithmetic needs.
var propSpecs = []types.PropertySpec{
	{Type: "Datacenter", PathSet: []string{"name"}},
	{Type: "Folder", PathSet: []string{"parent"}},
	{Type: "ClusterComputeResource", PathSet: []string{"name", "parent", "host", "datastore"}},
	{Type: "HostSystem", PathSet: []string{"summary.hardware.numCpuThreads", "summary.hardware.memorySize",
		"runtime.inMaintenanceMode", "runtime.connectionState"}},
	{Type: "Datastore", PathSet: []string{"name", "summary.capacity", "summary.accessible",
		"summary.type", "summary.maintenanceMode"}},
}

// inventory is one listing: every object of the view, by reference.
type inventory struct {
	names    map[types.ManagedObjectReference]string
	parents  map[types.ManagedObjectReference]types.ManagedObjectReference
	clusters []cluster
	// hosts and datastores are keyed by the reference's value alone (its
	// type is the map's): a string key is one fast hash and compare, a
	// two-string struct the generic ones, dear in the Wasm guest.
	hosts      map[string]host
	datastores map[string]datastore
}

// hostOf and datastoreOf are the object ref names, if it is one of its
// type (a reference of another type is not found, as before).
func (inv *inventory) hostOf(ref types.ManagedObjectReference) (host, bool) {
	h, ok := inv.hosts[ref.Value]
	return h, ok && ref.Type == "HostSystem"
}

func (inv *inventory) datastoreOf(ref types.ManagedObjectReference) (datastore, bool) {
	d, ok := inv.datastores[ref.Value]
	return d, ok && ref.Type == "Datastore"
}

type cluster struct {
	ref        types.ManagedObjectReference
	name       string
	hosts      []types.ManagedObjectReference
	datastores []types.ManagedObjectReference
}

type host struct {
	threads, memory int64
	maintenance     bool
	connection      string
}

type datastore struct {
	name              string
	capacity          int64
	accessible        bool
	kind, maintenance string
}

// ListNodes reports one node per cluster in scope, from one
// PropertyCollector retrieval over a container view.
func (c *Client) ListNodes(hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	ctx := context.Background()
	vc, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	inv, err := c.retrieve(ctx, vc)
	if err != nil {
		return nil, err
	}
	vcUUID := vc.ServiceContent.About.InstanceUuid
	var nodes []hostabi.Node
	for _, cl := range inv.clusters {
		if !c.inScope(inv, cl) {
			continue
		}
		id, err := ClusterUUID(vcUUID, cl.ref.Value)
		if err != nil {
			c.log(4, fmt.Sprintf("cluster %s (%s) left out: %v", cl.name, cl.ref.Value, err))
			continue
		}
		n := hostabi.Node{UUID: id, Name: cl.name}
		var all bool
		n.Resources, all = c.resources(inv, cl)
		n.Maintenance = all
		nodes = append(nodes, n)
	}
	return nodes, nil
}

func (c *Client) inScope(inv *inventory, cl cluster) bool {
	if len(c.cfg.Clusters) > 0 && !slices.Contains(c.cfg.Clusters, cl.name) {
		return false
	}
	if len(c.cfg.Datacenters) == 0 {
		return true
	}
	return slices.Contains(c.cfg.Datacenters, inv.datacenterOf(cl.ref))
}

// datacenterOf walks up the parents to the datacenter's name.
func (inv *inventory) datacenterOf(ref types.ManagedObjectReference) string {
	for range 64 { // folders nest; a loop in bad data must end
		p, ok := inv.parents[ref]
		if !ok {
			return ""
		}
		if p.Type == "Datacenter" {
			return inv.names[p]
		}
		ref = p
	}
	return ""
}

// retrieve creates a container view of the root folder and reads every
// property of propSpecs in one RetrievePropertiesEx (and its pages).
func (c *Client) retrieve(ctx context.Context, vc *vim25.Client) (*inventory, error) {
	kinds := make([]string, len(propSpecs))
	for i, p := range propSpecs {
		kinds[i] = p.Type
	}
	v, err := view.NewManager(vc).CreateContainerView(ctx, vc.ServiceContent.RootFolder, kinds, true)
	if err != nil {
		return nil, fmt.Errorf("vcenter: create container view: %w", err)
	}
	defer func() { _ = v.Destroy(ctx) }()
	spec := types.PropertyFilterSpec{
		ObjectSet: []types.ObjectSpec{{Obj: v.Reference(), Skip: types.NewBool(true),
			SelectSet: []types.BaseSelectionSpec{&types.TraversalSpec{Type: "ContainerView", Path: "view"}}}},
		PropSet: propSpecs,
	}
	pc := vc.ServiceContent.PropertyCollector
	page, err := retrieveFirst(ctx, vc, &types.RetrievePropertiesEx{This: pc,
		SpecSet: []types.PropertyFilterSpec{spec}, Options: types.RetrieveOptions{MaxObjects: c.cfg.PageSize}})
	if err != nil {
		return nil, fmt.Errorf("vcenter: retrieve properties: %w", err)
	}
	inv := &inventory{names: map[types.ManagedObjectReference]string{}, parents: map[types.ManagedObjectReference]types.ManagedObjectReference{},
		hosts: map[string]host{}, datastores: map[string]datastore{}}
	for page != nil {
		for _, oc := range page.Objects {
			if err := inv.add(oc); err != nil {
				return nil, err
			}
		}
		if page.Token == "" {
			break
		}
		if page, err = retrieveNext(ctx, vc, &types.ContinueRetrievePropertiesEx{This: pc, Token: page.Token}); err != nil {
			return nil, fmt.Errorf("vcenter: retrieve properties (next page): %w", err)
		}
	}
	slices.SortFunc(inv.clusters, func(a, b cluster) int { return strings.Compare(a.ref.Value, b.ref.Value) })
	return inv, nil
}

// add records one object. A property vCenter could not read (missingSet)
// fails the listing: a total computed without it would be wrong.
func (inv *inventory) add(oc types.ObjectContent) error {
	if len(oc.MissingSet) > 0 {
		m := oc.MissingSet[0]
		return fmt.Errorf("vcenter: %s %s: property %s unreadable: %T", oc.Obj.Type, oc.Obj.Value, m.Path, m.Fault.Fault)
	}
	p := func(name string) any { // the last value of name, as a map of them would keep
		for i := len(oc.PropSet) - 1; i >= 0; i-- {
			if oc.PropSet[i].Name == name {
				return oc.PropSet[i].Val
			}
		}
		return nil
	}
	ref := oc.Obj
	if parent, ok := p("parent").(types.ManagedObjectReference); ok {
		inv.parents[ref] = parent
	}
	switch ref.Type {
	case "Datacenter":
		inv.names[ref], _ = p("name").(string)
	case "ClusterComputeResource":
		cl := cluster{ref: ref}
		cl.name, _ = p("name").(string)
		cl.hosts = refs(p("host"))
		cl.datastores = refs(p("datastore"))
		inv.clusters = append(inv.clusters, cl)
	case "HostSystem":
		h := host{threads: integer(p("summary.hardware.numCpuThreads")), memory: integer(p("summary.hardware.memorySize"))}
		h.maintenance, _ = p("runtime.inMaintenanceMode").(bool)
		h.connection = text(p("runtime.connectionState"))
		inv.hosts[ref.Value] = h
	case "Datastore":
		d := datastore{capacity: integer(p("summary.capacity"))}
		d.name, _ = p("name").(string)
		d.accessible, _ = p("summary.accessible").(bool)
		d.kind, _ = p("summary.type").(string)
		d.maintenance, _ = p("summary.maintenanceMode").(string)
		inv.datastores[ref.Value] = d
	}
	return nil
}

// text is a string-valued property (an enum's value) without fmt's
// reflection for the usual types.
func text(v any) string {
	switch s := v.(type) {
	case types.HostSystemConnectionState:
		return string(s)
	case string:
		return s
	}
	return fmt.Sprint(v)
}

func refs(v any) []types.ManagedObjectReference {
	if a, ok := v.(types.ArrayOfManagedObjectReference); ok {
		return a.ManagedObjectReference
	}
	return nil
}

func integer(v any) int64 {
	switch n := v.(type) {
	case int16:
		return int64(n)
	case int32:
		return int64(n)
	case int64:
		return n
	case int:
		return int64(n)
	}
	return 0
}
