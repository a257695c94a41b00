// Package placementfake is an in-memory OpenStack Placement 8.0 for tests.
//
// It answers the calls the engine makes (providers, inventories, resource
// classes, traits, aggregates, allocations, usages) with the status codes,
// error bodies, error codes and generation rules of the real server. The
// shared contract suite in engine/placementtest runs against both this fake
// and a real Placement, which is what keeps the two in step.
//
// Differences on purpose:
//
//   - Generations are opaque. A new provider starts at a random generation
//     (never 0, sometimes beyond 2^53) and every bump moves to a new random
//     value, never +1. Clients that count generations fail here. WithSeed
//     makes the sequence reproducible.
//   - Faults can be injected at runtime (Inject): conflict storms, 5xx,
//     delays, dropped connections and providers that vanish. Helpers such as
//     BumpGeneration and AddTrait play "another writer".
//   - Every request is logged (Requests) with the generations its body
//     carried, so tests can check which calls were made and that no
//     generation was invented (SentUnknownGenerations).
//
// Calls outside that set (nested providers, POST /allocations, the
// single-class inventory routes, ?resources=) answer 501, a status the real
// server never sends, so a test that strays there fails loudly.
//
// The fake must never be used outside tests, never try to be faster than
// simple (one mutex serialises all state, like the single-threaded real
// server), and never accept a request the real server would refuse.
package placementfake
