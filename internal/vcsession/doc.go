// Package vcsession is the engine's credential for a vCenter granted to a
// plugin (`auth = "vcenter"` in [plugin.services]): it logs in with the
// configured user and password through govmomi's SessionManager, adds the
// session cookie (vmware_soap_session) to the plugin's requests, logs in
// again when vCenter answers with a NotAuthenticated fault, and logs out
// when the engine closes it. It implements wasmhost.Credential.
//
// It runs in the engine process only. It must never hand the password or
// the cookie to a plugin, and never log either.
package vcsession
