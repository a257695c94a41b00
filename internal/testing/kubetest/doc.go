// Package kubetest runs a real kube-apiserver for tests, on an etcd of
// its own (etcdtest), with a static token for an administrator, self-
// signed serving certificates and a service-account key made at start.
//
// The binary is built by scripts/kube/install.sh into its cache dir, or
// named by RPENGINE_KUBE_APISERVER. Start skips the test under -short,
// without RPENGINE_KUBE_E2E=1 (make test-kube sets it), and when the
// binary is missing, unless RPENGINE_REQUIRE_E2E=1, which turns
// the skip into a failure (CI). It is for tests only and must never start
// anything on a non-loopback address or leave a server running after the
// test binary exits.
package kubetest
