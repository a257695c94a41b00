package ops_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/ops"
)

type session struct {
	expires  time.Time
	failures atomic.Int64
}

func (s *session) Expires() time.Time   { return s.expires }
func (s *session) LoginFailures() int64 { return s.failures.Load() }

func TestAuthMetricsFollowTheSessionAcrossReloads(t *testing.T) {
	m := ops.NewMetrics()
	h := m.Handler()
	if metric(t, h, "rpengine_auth_token_expiry_timestamp_seconds") != 0 || metric(t, h, "rpengine_auth_login_failures_total") != 0 {
		t.Fatal("auth series not zero before any session")
	}
	first := &session{expires: time.Unix(1_900_000_000, 0)}
	m.WatchAuth(first)
	first.failures.Add(2)
	if got := metric(t, h, "rpengine_auth_token_expiry_timestamp_seconds"); got != 1_900_000_000 {
		t.Fatalf("expiry %v", got)
	}
	if got := metric(t, h, "rpengine_auth_login_failures_total"); got != 2 {
		t.Fatalf("failures %v, want 2", got)
	}
	// A reload opens a new session: the counter must not go back.
	second := &session{expires: time.Unix(1_900_003_600, 0)}
	m.WatchAuth(second)
	second.failures.Add(1)
	if got := metric(t, h, "rpengine_auth_login_failures_total"); got != 3 {
		t.Fatalf("failures %v after a reload, want 3", got)
	}
	if got := metric(t, h, "rpengine_auth_token_expiry_timestamp_seconds"); got != 1_900_003_600 {
		t.Fatalf("expiry %v, want the new session's", got)
	}
}
