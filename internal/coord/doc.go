// Package coord divides one fleet among several engines through etcd,
// or through the Kubernetes API (kube*.go).
//
// Each engine registers as a member under a lease. In the dynamic mode the
// live members divide the units — hash partitions of node uuids, or Ironic
// shards — by rendezvous hashing (rendezvous.go), which moves only the
// units of a member that came or went. A member writes a unit's providers
// only while it holds the unit's claim, a key bound to its lease
// (claims.go): it releases a claim only between cycles, and acquires one
// only when nobody holds it, so two members never hold one unit at once.
// In the static mode a member claims the shards, conductor groups or the
// whole fleet its config gives it, so a second engine given the same one
// is refused at run time.
//
// Fencing (session.go): the lease proves a claim only while it can still
// be alive. Fence gives each cycle a context that ends three quarters of a
// TTL after the last keepalive that etcd answered, before the server can
// expire the lease and a peer can take the claim. docs/SCALEOUT.md has the
// timing.
//
// The Kubernetes backend (KubeCoordinator) keeps the same protocol with
// Leases: one per member, renewed; one per unit, whose holder must be the
// current holder of a live member Lease; the record in ConfigMaps. A
// Lease has no server-side expiry, so a peer counts as gone only after
// this process has seen its Lease unchanged for its duration, by its own
// monotonic clock; the holder stops at ¾ of it.
//
// This package must never let a member hold a unit another live member
// holds, never act on a claim after its lease may have expired (or, on
// Kubernetes, after a peer may have counted its Lease expired), never
// compare another machine's timestamps with this one's clock to decide
// who holds what, and never delete or write a provider: it only says
// which nodes an engine may manage and whose providers it may take over;
// the engine does the writes, each generation-checked.
package coord
