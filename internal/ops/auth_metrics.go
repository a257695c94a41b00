package ops

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// AuthSource is the Keystone session as /metrics shows it
// (*auth.Session).
type AuthSource interface {
	Expires() time.Time   // zero without Keystone
	LoginFailures() int64 // failed re-authentications of this session
}

// authMetrics follows the current session: a reload opens a new one.
type authMetrics struct {
	mu       sync.Mutex
	src      AuthSource
	previous int64 // failures of the sessions before src
}

func (m *Metrics) registerAuth() {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "rpengine_auth_token_expiry_timestamp_seconds",
		Help: "Unix time the Keystone token expires (0 without Keystone)."}, m.tokenExpiry))
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "rpengine_auth_login_failures_total",
		Help: "Keystone re-authentications that failed."}, m.loginFailures))
}

// WatchAuth exposes src's token expiry and failed logins. A reload passes
// its new session; the failures of earlier sessions stay counted.
func (m *Metrics) WatchAuth(src AuthSource) {
	m.auth.mu.Lock()
	defer m.auth.mu.Unlock()
	if m.auth.src == src {
		return
	}
	if m.auth.src != nil {
		m.auth.previous += m.auth.src.LoginFailures()
	}
	m.auth.src = src
}

func (m *Metrics) tokenExpiry() float64 {
	m.auth.mu.Lock()
	defer m.auth.mu.Unlock()
	if m.auth.src == nil || m.auth.src.Expires().IsZero() {
		return 0
	}
	return unix(m.auth.src.Expires())
}

func (m *Metrics) loginFailures() float64 {
	m.auth.mu.Lock()
	defer m.auth.mu.Unlock()
	n := m.auth.previous
	if m.auth.src != nil {
		n += m.auth.src.LoginFailures()
	}
	return float64(n)
}

// AuthHealth is the session as the status page shows it.
type AuthHealth struct {
	Keystone      bool      // false: noauth, nothing to expire
	Expires       time.Time // when the current token expires
	LoginFailures int64     // failed re-authentications, reloads included
}

// Auth reports the current session's health.
func (m *Metrics) Auth() AuthHealth {
	exp := m.tokenExpiry()
	return AuthHealth{Keystone: exp > 0, Expires: time.Unix(int64(exp), 0), LoginFailures: int64(m.loginFailures())}
}
