package auth

// LastLoginError is why the latest re-authentication failed, or nil if
// it succeeded (or none was needed yet).
func (s *Session) LastLoginError() error {
	s.logins.mu.Lock()
	defer s.logins.mu.Unlock()
	return s.logins.last
}
