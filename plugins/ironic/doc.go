// Command ironic is the Ironic inventory plugin: it lists the bare-metal
// nodes in the engine's scope from the OpenStack Bare Metal API, confirms
// node deletions on request, and lists the instances on this engine's host
// from the Compute API when a "compute" service is granted and
// compute_host is configured. The logic lives in package ironic (under this
// directory); this package only wires it to the guest SDK.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared.
// Configuration ([plugin.config]): page_size, max_restarts, compute_host
// (see ironic.Config). The endpoints and any token are granted by the
// operator in [plugin.services] and never reach the plugin.
//
// It must never reach anything but the services the host grants, and
// never report a partial listing or an unproven deletion.
package main
