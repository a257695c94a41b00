// Package engine reconciles an inventory source's nodes into Placement.
//
// One cycle (its steps in order in steps.go) reads nodes, then instances
// — always in that order, so a consumer scheduled during a slow node
// listing is seen, never missed — computes the desired providers as a pure
// function of (nodes, instances, options) (desired.go), lists Placement's
// providers in one request, records what it may add (internal/record, whose
// Keeper alone hands out the writer that sends), and writes only real
// differences, each guarded by the generation the server last returned
// (sync.go).
//
// What a cycle does is told as typed events to one Observer (events.go)
// and, node by node, as Outcomes in its Report (outcome.go): logs,
// metrics, the status page and tests read those, never log text.
//
// The engine must never: delete a provider because a node looks unowned or
// is missing from a listing; write after a failed or partial listing;
// compute a generation; clear inventory with DELETE; touch an allocation
// of any consumer but its own holds (hold.go, beside nova-compute only);
// remove a trait or aggregate it did not add.
package engine
