package placement

import (
	"context"
	"errors"
	"net"
	"time"
)

// Retry bounds how a request that failed in a way a second try may fix
// (a 5xx answer or a dropped connection) is tried again within the
// cycle, with exponential backoff and full jitter.
//
// Retried are GET, PUT and the POST that creates a provider: every PUT
// this client sends is either guarded by a generation (a retry of a
// write the server applied but whose answer was lost fails with a
// conflict, which the engine handles by re-reading) or creates a named
// class or trait (idempotent); a create names its uuid, so a retry of an
// applied one fails as a duplicate, which the engine resolves by reading
// the provider. DELETE is not retried: a deletion is re-proved by the
// next cycle.
type Retry struct {
	// Attempts is the tries per request, the first included: 0 means
	// DefaultAttempts, 1 means no retry.
	Attempts int
	// Base is the first backoff ceiling, doubled per retry up to Max.
	Base, Max time.Duration
}

// Retry defaults: 4 tries wait at most 0.1+0.2+0.4 s in all, so a
// provider sync stays well inside a cycle even when every try fails.
const (
	DefaultAttempts = 4
	defaultBase     = 100 * time.Millisecond
	defaultMax      = 2 * time.Second
)

func (r Retry) withDefaults() Retry {
	if r.Attempts <= 0 {
		r.Attempts = DefaultAttempts
	}
	if r.Base <= 0 {
		r.Base = defaultBase
	}
	if r.Max <= 0 {
		r.Max = defaultMax
	}
	return r
}

// backoff is the wait before try number attempt+1 (attempt >= 1).
func (r Retry) backoff(attempt int) time.Duration { return Backoff(r.Base, r.Max, attempt) }

// retryable says whether a failed request may be tried again.
func retryable(ctx context.Context, method, path string, err error) bool {
	safe := method == "GET" || method == "PUT" || method == "POST" && path == "resource_providers"
	if !safe || ctx.Err() != nil {
		return false
	}
	var api *APIError
	if errors.As(err, &api) {
		return api.Status >= 500 && api.Status <= 599
	}
	var transport *transportError
	if !errors.As(err, &transport) {
		return false // a malformed answer or a failed re-authentication
	}
	// A timeout is a slow Placement, not a lost answer: retrying it
	// would multiply the wait and the load.
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout()) && !errors.Is(err, context.DeadlineExceeded)
}

// transportError is a request that got no answer (connection refused,
// reset or closed before the answer).
type transportError struct{ err error }

func (e *transportError) Error() string { return e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }
