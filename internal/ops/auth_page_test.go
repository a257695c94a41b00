package ops_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/ops"
)

type fakeAuth struct {
	expires  time.Time
	failures int64
}

func (a fakeAuth) Expires() time.Time   { return a.expires }
func (a fakeAuth) LoginFailures() int64 { return a.failures }

// The status page shows the session's token expiry and failed logins,
// from the same source as /metrics.
func TestStatusPageShowsAuthHealth(t *testing.T) {
	o := ops.New(func() time.Time { return time.Unix(1_000, 0) })
	o.Configure(ops.Info{EngineID: "e", Auth: "password as user rpengine", Interval: time.Minute, UnhealthyAfter: 3, History: 5})
	page := func() string {
		rec := httptest.NewRecorder()
		o.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		return rec.Body.String()
	}
	if p := page(); !strings.Contains(p, `failed logins: <span class="ok">0</span>`) || strings.Contains(p, "token expires") {
		t.Fatalf("noauth page: %s", p)
	}
	o.Metrics.WatchAuth(fakeAuth{expires: time.Unix(1_700_000_000, 0), failures: 2})
	p := page()
	if !strings.Contains(p, `failed logins: <span class="bad">2</span>`) || !strings.Contains(p, "token expires") ||
		!strings.Contains(p, "password as user rpengine") {
		t.Fatalf("keystone page lacks the auth health: %s", p)
	}
}
