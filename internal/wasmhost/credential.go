package wasmhost

import (
	"context"
	"net/http"
)

// Credential authenticates a plugin's requests to one granted service. It
// lives in the engine process: the plugin never sees what Apply adds.
// Each kind of service (a Keystone token, a vCenter session, ...) is one
// small implementation; the gate does the rest.
type Credential interface {
	// Apply adds the current credential to req (a header, a cookie),
	// obtaining one first if there is none.
	Apply(ctx context.Context, req *http.Request) error
	// Rejected says whether the service's answer to a request means the
	// credential it carried is no longer valid (Keystone's 401, vCenter's
	// NotAuthenticated fault).
	Rejected(status int, header http.Header, body []byte) bool
	// Renew replaces the credential req carried after the service
	// rejected it. Implementations renew only if req's credential is
	// still the current one, so requests rejected together log in once.
	Renew(ctx context.Context, req *http.Request) error
}

// headerCredential adapts Options.AuthHeader: a header that is never
// renewed by the gate.
type headerCredential struct {
	service string
	header  func(service string) (name, value string)
}

func (h headerCredential) Apply(_ context.Context, req *http.Request) error {
	if name, value := h.header(h.service); name != "" {
		req.Header.Set(name, value)
	}
	return nil
}

func (headerCredential) Rejected(int, http.Header, []byte) bool     { return false }
func (headerCredential) Renew(context.Context, *http.Request) error { return nil }

// credentialHeaders are never taken from the guest: the host alone sets
// credentials.
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Cookie2", "X-Auth-Token", "X-Service-Token"}

// sessionHeaders are never handed to the guest: they carry credentials or
// session state (a new token, a session cookie) or name the identity
// service, which the plugin has no business knowing.
var sessionHeaders = []string{"Set-Cookie", "Set-Cookie2", "X-Subject-Token", "X-Auth-Token", "X-Service-Token",
	"Www-Authenticate", "Proxy-Authenticate", "Authentication-Info", "Proxy-Authentication-Info", "Vmware-Api-Session-Id"}
