package auth

import (
	"context"
	"net/http"
)

// KeystoneCredential adds the session's token to a plugin's requests to a
// granted service, and logs in again when the service answers 401 (a
// revoked token, a token Keystone restarted without). It is a
// wasmhost.Credential.
type KeystoneCredential struct{ s *Session }

// Credential is the Keystone credential for granted services, or nil for
// NoAuth.
func (s *Session) Credential() *KeystoneCredential {
	if s.pc == nil {
		return nil
	}
	return &KeystoneCredential{s}
}

// Apply sets X-Auth-Token; a token about to expire is refreshed first.
func (k *KeystoneCredential) Apply(_ context.Context, req *http.Request) error {
	name, value := k.s.Header("")
	req.Header.Set(name, value)
	return nil
}

// Rejected is a 401: Keystone's middleware refused the token.
func (k *KeystoneCredential) Rejected(status int, _ http.Header, _ []byte) bool {
	return status == http.StatusUnauthorized
}

// Renew issues a new token unless another request already replaced the
// one req carried (gophercloud serialises concurrent renewals).
func (k *KeystoneCredential) Renew(ctx context.Context, req *http.Request) error {
	if err := k.s.pc.Reauthenticate(ctx, req.Header.Get("X-Auth-Token")); err != nil {
		return err // named by the counted ReauthFunc (refresh.go)
	}
	return nil
}
