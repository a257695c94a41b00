// Package placementfake is an in-memory OpenStack Placement 8.0 for tests.
//
// It answers the calls the engine makes (providers, inventories, resource
// classes, traits, aggregates, allocations, usages) with the status codes,
// error bodies, error codes and generation rules of the real server, at
// microversions 1.26 to 1.39. Versions above 1.39 get the real 406. Below
// 1.26 only the differences the engine could meet are honoured: POST
// /resource_providers answers 201 without a body before 1.20, error bodies
// lose "code" before 1.23, aggregates take a bare list before 1.19, and
// reserved == total is refused before 1.26.
//
// Two tests keep it honest: the contract suite in internal/testing/placementtest runs
// against both this fake and a real Placement, and TestSameAnswersAsReal
// replays a script of edge cases against both and compares every answer.
//
// Differences on purpose:
//
//   - Generations are opaque. A new provider starts at a random generation
//     (never 0, sometimes beyond 2^53) and every bump moves to a new random
//     value, never +1. Clients that count generations, or pass them through
//     a float64, fail here. WithSeed makes the sequence reproducible.
//   - Faults can be injected at runtime (Inject): conflict storms, 5xx,
//     delays, dropped connections and providers that vanish. Helpers such as
//     BumpGeneration and AddTrait play "another writer".
//   - Every request is logged (Requests, Find) with the generations its body
//     carried, so tests can check which calls were made and that no
//     generation was invented (SentUnknownGenerations).
//   - Calls outside that set (nested providers, POST /allocations, the
//     single-class inventory routes, ?resources=) answer 501, a status the
//     real server never sends, so a test that strays there fails loudly.
//
// The fake must never be used outside tests, never grow cleverness the real
// server lacks (one mutex serialises all state, like the single-threaded
// real server), and never drift from the real answers without a test that
// shows the real server changed.
package placementfake
