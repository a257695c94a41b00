// Package projection is the JSON projection of the ABI (hostabi/ABI.md,
// json_project): a plugin names the members it wants from a JSON document,
// the host decodes the document natively and writes back compact records.
// It holds both sides, the host's decoder (HostProject) and the guest's
// reader of its frames (ParseWire), so the host never imports the guest
// SDK and both speak one wire format.
//
// It must never read or write anything but the bytes it is given: it runs
// on a plugin's documents in the host.
package projection
