// Package placementtest runs a real OpenStack Placement for tests and holds
// the contract suite that both the real server and internal/testing/placementfake
// must pass.
//
// StartReal starts a private Placement 8.0 (Debian python3-placement, in
// memory sqlite) for one test; Shared starts one per test binary and Main
// stops it. Both skip the test under -short, and when Placement is not
// installed unless RPENGINE_REQUIRE_E2E=1; both use RPENGINE_PLACEMENT_URL
// instead of starting anything when it is set.
//
// RunContract speaks raw HTTP and checks only what the real server was seen
// to do. It treats generations as opaque: it compares them for equality and
// never does arithmetic on them.
//
// This package must never import engine code or placementfake (the
// contract is about Placement, not about us), never assume a fresh server
// (it runs against shared ones, so every name and uuid it creates is
// unique), and never leave a Placement process running after the test
// binary exits.
package placementtest
