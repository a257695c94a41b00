// Package ironic is the logic of the Ironic inventory plugin, kept out of
// the Wasm main package so it runs and is tested natively: it lists the
// nodes in scope from the Bare Metal API (marker paging that re-applies its
// own filters, an explicit microversion, all or nothing), confirms a
// node's deletion on request, and lists the instances on this engine's
// host from the Compute API. It reaches the network only through the
// Transport it is given (guest.HTTP in the plugin, an httptest server in
// tests) and decodes bulk JSON through guest.Project.
//
// It must never return a partial listing as a success, never widen the
// scope it was asked for (a filter the server cannot apply is an error),
// and never report a node deleted without Ironic's own 404 for it.
package ironic
