// Package ironictest runs the real OpenStack Ironic 21.4 (Debian's
// python3-ironic) on loopback for end-to-end tests, and drives its nodes
// through their states with gophercloud's baremetal client.
//
// StartReal gives each test its own all-in-one Ironic (API and conductor in
// one process, fake-hardware, noauth, no RPC bus, sqlite) from the config
// in scripts/ironic/ironic.conf.in. The schema is built once per machine
// into a template database (about 7 s) that each test copies, so a start
// costs only the process's own 3-5 s. Tests skip when Ironic is not
// installed (run scripts/ironic/install.sh), unless RPENGINE_REQUIRE_E2E=1,
// which turns the skip into a failure; -short skips them too.
//
// It is for tests only, and must never touch an Ironic it did not start:
// every process it starts is killed by PID when the test ends (and dies
// with the test binary on Linux).
package ironictest
