// Package keystonetest gives tests a Keystone. Server is a Keystone-shaped
// HTTP server: it issues v3 tokens for one user (password) and one
// application credential, serves a service catalog, and guards mounted
// services with the token, so expiry and revocation can be scripted
// without waiting. StartReal sets up and runs Debian's real Keystone
// (python3-keystone, scripts/keystone/) with the same user, and Guard
// puts a service behind its token validation, as keystonemiddleware does.
//
// It must never be used outside tests, nor check anything but what the
// engine relies on (the fake accepts one user and one application
// credential).
package keystonetest
