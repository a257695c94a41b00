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
// generation: use SetInventories with an empty map), and never write
// allocations but the engine's own hold consumers (Reshape,
// DeleteConsumer: engine/hold.go derives their uuids; every other
// consumer is read only). Writes are sent only through the ownership
// record's writer (engine/internal/record; make check's writecheck).
package placement
