// Package etcdtest runs a real etcd (Debian's etcd-server, 3.4) for tests,
// and a TCP proxy that a test can sever to cut one client off from it.
// StartSecure runs it as operators secure it: TLS with client
// certificates from a CA made for the test, auth on, and one user whose
// role covers one prefix (secure.go).
//
// Start skips the test under -short, and when etcd is not installed unless
// RPENGINE_REQUIRE_E2E=1, which turns the skip into a failure (CI). It is
// for tests only and must never start anything on a non-loopback address
// or leave an etcd running after the test binary exits.
package etcdtest
