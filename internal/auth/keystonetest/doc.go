// Package keystonetest is a Keystone-shaped HTTP server for tests: it
// issues v3 tokens for one user (password) and one application credential,
// serves a service catalog, and guards mounted services with the token, so
// expiry and revocation can be scripted. It implements only what the
// engine's auth uses and never ships in the engine.
//
// It must never be used outside tests, nor check anything but what the
// engine relies on (it accepts one user and one application credential).
package keystonetest
