// Package events is the engine's event source: it consumes Ironic's
// versioned notifications (or any other plugin's) from an AMQP 0-9-1 bus,
// reconnecting with backoff, and hands them on in coalesced batches. It
// never interprets a message: the plugin maps each to the nodes it
// concerns (hostabi.ExportMapEvents) and the engine re-reads those nodes
// from the source, so a message is only a hint. A batch that may have
// missed messages (queue overflow, a reconnect) says so, and the daemon
// then runs a full cycle. docs/EVENTS.md has the operator's view.
package events
