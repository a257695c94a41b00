package events

import (
	"fmt"
	"slices"
)

// Merge adds o to b: what arrived while the receiver was busy becomes one
// batch, synced at once when the receiver is free, instead of a queue of
// small ones each waiting its turn. The merged batch is bounded as the
// queue is: past maxMessages messages, or maxHeldBytes of bodies, the
// messages are dropped and the batch is marked Lost (a full cycle covers
// them).
func (b *Batch) Merge(o Batch, maxMessages int) {
	b.Messages = append(b.Messages, o.Messages...)
	if len(o.Nodes) > 0 {
		b.Nodes = slices.Compact(slices.Sorted(slices.Values(append(b.Nodes, o.Nodes...))))
	}
	if o.Lost && !b.Lost {
		b.Lost, b.Why = true, o.Why
	}
	if b.Overflow == "" {
		b.Overflow = o.Overflow
	}
	if b.Lost {
		b.Messages = nil // a full cycle covers them: hold nothing
		return
	}
	size := 0
	for _, m := range b.Messages {
		size += len(m.Body)
	}
	switch {
	case len(b.Messages) > maxMessages:
		b.Lost, b.Why = true, fmt.Sprintf("more than events.max_queue messages waited while a node sync ran (%d)", len(b.Messages))
	case size > maxHeldBytes:
		b.Lost, b.Why = true, fmt.Sprintf("more than %d MiB of messages waited while a node sync ran", maxHeldBytes>>20)
	}
	if b.Lost {
		b.Messages = nil
	}
}
