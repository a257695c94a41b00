// Package soak is the soak-and-chaos harness: it drives the
// engine through long randomized histories against the fake Placement,
// with faults injected, and checks every invariant README.md promises
// after every cycle. `make soak` runs it at scale (cmd/soak); TestSoak runs
// a short seeded history in `make test`.
//
// # The pieces
//
//   - Cloud (world.go, events.go, scheduler.go): the harness's model of
//     the cloud, Ironic's nodes and nova's instances, evolved by a seeded
//     RNG between cycles: instances land (the scheduler allocates in
//     Placement, bumping the provider's generation) and are deleted (nova
//     frees the allocation with PUT {} or a forced DELETE), nodes clean,
//     go into maintenance, change power, provision state, traits, class
//     (also under a live allocation), scope, are deleted and re-enrolled
//     with the same uuid; operators add foreign traits and aggregates and
//     delete providers out of band.
//   - The source: in memory (source.go, an engine.Source that also proves
//     deletion, only for nodes really gone), or the real fake plugin in
//     Wasm reading the world from the harness over HTTP (wasm.go; the
//     plugin's `world` config key). Both serve the world through the same
//     functions, so both get the same faults: failed listings, a partial
//     listing that claims to be complete, calls that overrun their time
//     limit, hostile records, and instances landing after the node
//     snapshot was taken (the race nova lost providers to). Plugin traps
//     come from a second, faulty plugin instance.
//   - Placement faults (faults.go): 409 storms, 5xx, timeouts (the client's
//     limit is short), dropped connections, slow answers, providers that
//     vanish mid-write, injected into the fake for one cycle. The gate
//     (gate.go) strikes at the engine's n-th write: other writers, and
//     engine restarts mid-cycle (the cycle's context cancelled, or a
//     graceful stop), after which a new engine starts with the state file
//     as the dead process left it, or without one.
//   - Phases: chaos phases alternate with quiet ones, in which no fault is
//     injected (other writers still work). After two quiet cycles
//     Placement must equal the desired state.
//   - The oracle (expect.go) computes what each cycle should write from
//     the same two snapshots the engine received, by code that shares
//     nothing with the engine's.
//   - The checks (checks.go, state_checks.go) run after every cycle:
//     request-log checks (opaque generations, no allocation writes, every
//     DELETE of a provider backed by the source's proofs of deletion in two
//     cycles with no listing of the node in between that the deleting
//     engine saw, creates and inventory writes matching the listings,
//     other managers' providers never touched) and state checks
//     (allocations intact, foreign traits and aggregates kept, no stray
//     provider), and in quiet phases convergence, no missing provider,
//     deleted nodes reaped. Deletes after the node came back and went
//     again unseen (docs/BEHAVIOUR.md's rule holds, "gone two cycles in a row" does
//     not) are listed in the report apart from violations.
//
// The seed fixes the fault plan and the phases exactly, and the world's
// random draws; what the engine's goroutine timing decides (which write a
// conflict hits, whether the scheduler found room) may differ between
// runs of one seed.
//
// # What it must never do
//
// It must never judge the engine by the engine's own code (the oracle is
// separate), never hide a violation (counted and reported, even when
// tolerated by docs/BEHAVIOUR.md's own rules, like former traits a crashed engine no
// longer knows it added), never make its own requests during a cycle over
// HTTP (they would land in the engine's request log; during a cycle it
// acts only through the fake's in-process helpers), and never depend on
// wall-clock luck: a time limit hit with no fault injected restarts the
// quiet phase instead of failing it, and is counted.
package soak
