// Package placement is the engine's OpenStack Placement client.
//
// Generations are opaque: a Generation holds the exact JSON the server
// sent and is only compared for equality and sent back; this package never
// computes one. Every call uses the one microversion negotiated in New
// (at least 1.26, so reserved may equal total and errors carry a code).
// Reads and generation-guarded writes that meet a 5xx or a dropped
// connection are retried a bounded number of times with jittered backoff
// (Retry); errors name Placement's title, detail and request id.
//
// It must never clear inventories with DELETE (that carries no
// generation: use SetInventories with an empty map) and never touch
// allocations.
package placement
