// Package vcsimtest runs govmomi's vCenter simulator (vcsim, built by
// scripts/vcsim/install.sh at the govmomi version go.mod requires) on
// loopback for end-to-end tests, and reads or changes its inventory with
// govmomi, independently of the plugin under test.
//
// Tests skip when vcsim is not built, unless RPENGINE_REQUIRE_E2E=1, which
// turns the skip into a failure; -short skips them too.
//
// It is for tests only, and must never touch a vCenter it did not start:
// every process it starts is killed by PID when the test ends (and dies
// with the test binary on Linux).
package vcsimtest
