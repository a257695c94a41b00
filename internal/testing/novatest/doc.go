// Package novatest runs nova 26.2.2's own resource reporting (Debian's
// python3-nova) against a real Ironic and Placement, for the end-to-end
// tests of running beside nova-compute (e2e/nova_test.go).
//
// Start runs scripts/nova/driver.py: one Python process holding nova's real
// ComputeManager with the Ironic driver, which runs the periodic
// update_available_resource when asked (Periodic), ages the provider
// association refresh (RefreshDue), or records an instance (AddInstance).
// Stopping it and starting again on the same directory is a nova-compute
// restart. Tests skip when nova is not installed (scripts/nova/install.sh)
// unless RPENGINE_REQUIRE_E2E=1, and under -short.
//
// It is for tests only, and must never touch a nova it did not start:
// the process it starts is killed by PID when the test ends.
package novatest
