// Package e2e runs the engine binary end to end against the real
// OpenStack services from Debian's packages (Placement 8.0, Ironic 21.4),
// started on loopback by internal/testing/placementtest and internal/testing/ironictest.
// The tests skip when the services are missing, unless
// RPENGINE_REQUIRE_E2E=1 (CI), which turns a skip into a failure.
//
// Tests here must check results through the services' own APIs, never
// through the engine's view of them.
package e2e
