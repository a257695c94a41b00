// Package record is the one home of the ownership record's durability:
// the engine's state file and, with [coord] etcd, the shared store, behind
// one type (Keeper). Keeper.Intend makes what a run may add durable where
// it must be — the file fsynced, the store written — and only then hands
// out the Writer that sends to Placement; a plan's Keeper hands out a
// recording Writer from the same call and persists nothing.
//
// What the record holds, and how entries merge, is the engine's (its
// State); this package decides only when a Writer may be had.
//
// It must never hand out a Writer that sends before the intent is durable
// everywhere it must be, never write to Placement outside a Writer, and
// never read or change a Placement provider itself (a plan's collision
// check reads only).
package record
