// Package auth gives the engine its identity in an OpenStack cloud: a
// Keystone session (password, application credential, a clouds.yaml
// cloud, or the OS_* environment) through gophercloud, the service
// catalog that names Placement's endpoint and the endpoints granted to
// plugins, and the token the host adds to plugin HTTP calls. NoAuth keeps
// local use (Placement with noauth2) free of Keystone.
//
// The token is refreshed before it expires (gophercloud's
// ReauthBeforeTokenExpiration, clamped to half the token's lifetime when
// configured at or above it) and again on a 401 (AllowReauth). Failed
// logins are counted and named by cause (refused, unreachable, TLS...).
//
// It must never hand a token to plugin code (Header is for the host's
// HTTP gate only), never log or return a password, secret or token in an
// error, and never guess an endpoint the catalog does not list.
package auth
