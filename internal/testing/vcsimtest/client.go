package vcsimtest

import (
	"context"
	"net/url"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// Client logs in to the simulator as the test (not as the engine).
func (s *Sim) Client(ctx context.Context) *govmomi.Client {
	s.t.Helper()
	u, _ := url.Parse(s.URL + "/sdk")
	u.User = url.UserPassword(User, Password)
	c, err := govmomi.NewClient(ctx, u, true)
	if err != nil {
		s.t.Fatalf("vcsim client: %v", err)
	}
	s.t.Cleanup(func() { _ = c.Logout(context.Background()) })
	return c
}

// Host is what the tests read of a host.
type Host struct {
	Ref         types.ManagedObjectReference
	Name        string
	Threads     int64
	MemoryBytes int64
	Maintenance bool
	Connected   bool
}

// Datastore is what the tests read of a datastore.
type Datastore struct {
	Name       string
	Capacity   int64
	FreeSpace  int64
	Accessible bool
	Type       string
}

// Cluster is one cluster with its hosts and datastores, as vCenter says.
type Cluster struct {
	Ref        types.ManagedObjectReference
	Name       string
	Hosts      []Host
	Datastores []Datastore
}

// Clusters reads every cluster, with its own plain govmomi calls (one
// retrieval per type, decoded by govmomi). A reference to an object that
// is gone (vcsim leaves some behind) is skipped.
func Clusters(ctx context.Context, t testing.TB, c *govmomi.Client) []Cluster {
	t.Helper()
	m := view.NewManager(c.Client)
	v, err := m.CreateContainerView(ctx, c.ServiceContent.RootFolder, []string{"ClusterComputeResource", "HostSystem", "Datastore"}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Destroy(ctx)
	var cls []mo.ClusterComputeResource
	var hs []mo.HostSystem
	var ds []mo.Datastore
	if err := v.Retrieve(ctx, []string{"ClusterComputeResource"}, []string{"name", "host", "datastore"}, &cls); err != nil {
		t.Fatal(err)
	}
	if err := v.Retrieve(ctx, []string{"HostSystem"}, []string{"name", "summary"}, &hs); err != nil {
		t.Fatal(err)
	}
	if err := v.Retrieve(ctx, []string{"Datastore"}, []string{"summary"}, &ds); err != nil {
		t.Fatal(err)
	}
	hosts := map[types.ManagedObjectReference]mo.HostSystem{}
	for _, h := range hs {
		hosts[h.Self] = h
	}
	stores := map[types.ManagedObjectReference]mo.Datastore{}
	for _, d := range ds {
		stores[d.Self] = d
	}
	var out []Cluster
	for _, cl := range cls {
		o := Cluster{Ref: cl.Self, Name: cl.Name}
		for _, ref := range cl.Host {
			h, ok := hosts[ref]
			if !ok {
				continue
			}
			o.Hosts = append(o.Hosts, Host{Ref: h.Self, Name: h.Name,
				Threads: int64(h.Summary.Hardware.NumCpuThreads), MemoryBytes: h.Summary.Hardware.MemorySize,
				Maintenance: h.Summary.Runtime.InMaintenanceMode,
				Connected:   h.Summary.Runtime.ConnectionState == types.HostSystemConnectionStateConnected})
		}
		for _, ref := range cl.Datastore {
			d, ok := stores[ref]
			if !ok {
				continue
			}
			o.Datastores = append(o.Datastores, Datastore{Name: d.Summary.Name, Capacity: d.Summary.Capacity,
				FreeSpace: d.Summary.FreeSpace, Accessible: d.Summary.Accessible, Type: d.Summary.Type})
		}
		out = append(out, o)
	}
	return out
}

// Finder is govmomi's finder on the first datacenter.
func Finder(ctx context.Context, t testing.TB, c *govmomi.Client) *find.Finder {
	t.Helper()
	f := find.NewFinder(c.Client, true)
	dc, err := f.DefaultDatacenter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.SetDatacenter(dc)
	return f
}

// EnterMaintenance puts host into maintenance mode.
func EnterMaintenance(ctx context.Context, t testing.TB, c *govmomi.Client, host types.ManagedObjectReference) {
	t.Helper()
	task, err := object.NewHostSystem(c.Client, host).EnterMaintenanceMode(ctx, 0, false, nil)
	if err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		t.Fatalf("enter maintenance: %v", err)
	}
}

// AddHost adds a new host to cluster.
func AddHost(ctx context.Context, t testing.TB, c *govmomi.Client, cluster types.ManagedObjectReference, name string) {
	t.Helper()
	spec := types.HostConnectSpec{HostName: name, UserName: "root", Password: "x", Force: true}
	task, err := object.NewClusterComputeResource(c.Client, cluster).AddHost(ctx, spec, true, nil, nil)
	if err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		t.Fatalf("add host: %v", err)
	}
}

// RemoveDatastore destroys the datastore named name (vcsim has no
// RemoveDatastore; its Destroy unmounts it from every host and cluster).
func RemoveDatastore(ctx context.Context, t testing.TB, c *govmomi.Client, name string) {
	t.Helper()
	ds, err := Finder(ctx, t, c).Datastore(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	Destroy(ctx, t, c, ds.Reference())
}

// Destroy destroys a managed entity (a cluster) and waits.
func Destroy(ctx context.Context, t testing.TB, c *govmomi.Client, ref types.ManagedObjectReference) {
	t.Helper()
	task, err := object.NewCommon(c.Client, ref).Destroy(ctx)
	if err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		t.Fatalf("destroy %s: %v", ref, err)
	}
}
