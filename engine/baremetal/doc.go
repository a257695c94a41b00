// Package baremetal holds the rules that turn a bare-metal node into a
// provider: nova's resource-class normaliser and the reservation matrix;
// and, for running beside nova-compute, nova's own reserved rule and when
// the engine's stricter matrix needs a hold instead (nova.go).
//
// Why a package of its own: the engine is not Ironic-shaped. A source
// reports a node in one of two forms (hostabi.Node): bare metal (a raw
// resource class and Ironic-like states) or explicit resources (VCPU,
// MEMORY_MB, DISK_GB with allocation ratios, for other hypervisors). Only
// the first form goes through these rules, so a new hypervisor plugin fits
// with no engine change. The engine still applies them itself rather than
// trusting each plugin to: reserving an occupied or unhealthy node is a
// safety rule (no double booking), and the core owns safety. Plugins may
// import this package too, e.g. to report what the engine will do.
//
// It must stay pure: no I/O, no clock, no configuration.
package baremetal
