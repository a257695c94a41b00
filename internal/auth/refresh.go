package auth

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gophercloud/gophercloud/v2"
)

// tokenLifetime is expires_at - issued_at of the client's current token,
// or the time left if Keystone sent no issued_at.
func tokenLifetime(pc *gophercloud.ProviderClient) time.Duration {
	var t struct {
		IssuedAt  time.Time `json:"issued_at"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	if r, ok := pc.GetAuthResult().(interface{ ExtractInto(any) error }); ok && r.ExtractInto(&t) == nil &&
		!t.IssuedAt.IsZero() && t.ExpiresAt.After(t.IssuedAt) {
		return t.ExpiresAt.Sub(t.IssuedAt)
	}
	return time.Until(pc.TokenExpiry())
}

// refreshFraction is the part of a token's lifetime a refresh_before at
// or above that lifetime is clamped to.
const refreshFraction = 2 // half

// clampRefresh keeps refresh_before below the token's lifetime: at or
// above it, a fresh token is already due for refresh, and every request
// would log in again (quiet cycles took 4.5 s instead of 42 ms).
func clampRefresh(want, lifetime time.Duration, log *slog.Logger) time.Duration {
	if lifetime <= 0 || want < lifetime {
		return want
	}
	got := lifetime / refreshFraction
	if log != nil {
		log.Warn("auth.refresh_before is not shorter than the token's lifetime; using half the lifetime",
			"refresh_before", want, "token_lifetime", lifetime.Round(time.Second), "using", got.Round(time.Second))
	}
	return got
}

// logins counts failed re-authentications and keeps the last cause.
type logins struct {
	failures atomic.Int64
	mu       sync.Mutex
	last     error
}

// wrap makes pc's re-authentication counted and its errors named.
func (l *logins) wrap(pc *gophercloud.ProviderClient, where string) {
	inner := pc.ReauthFunc
	if inner == nil {
		return
	}
	pc.ReauthFunc = func(ctx context.Context) error {
		err := inner(ctx)
		if err != nil {
			err = explain(where, err)
			l.failures.Add(1)
		}
		l.mu.Lock()
		l.last = err
		l.mu.Unlock()
		return err
	}
}

// LoginFailures counts the re-authentications of this session that
// failed (the first login's failure is Open's error).
func (s *Session) LoginFailures() int64 { return s.logins.failures.Load() }

// RefreshBefore is the refresh margin in use, after clamping.
func (s *Session) RefreshBefore() time.Duration {
	if s.pc == nil {
		return 0
	}
	return s.pc.ReauthBeforeTokenExpiration
}
