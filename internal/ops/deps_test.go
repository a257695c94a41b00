package ops_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/ops"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// A Placement that stops answering makes /healthz and /readyz fail at
// once, naming it and the last error, while a cycle is still in progress
// and before any cycle ended; its first answer makes them pass again.
func TestHealthNamesAFailingPlacementDuringACycle(t *testing.T) {
	fake := placementfake.New()
	defer fake.Close()
	pc, err := placement.New(context.Background(), placement.Config{Endpoint: fake.URL(), Token: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	o := ops.New(nil)
	o.WatchPlacement(pc)
	o.CycleStarted()
	o.Progress(slog.New(slog.DiscardHandler), 0)(1, 100)
	if ok, why := o.Healthy(); !ok {
		t.Fatalf("healthy before any failure: %s", why)
	}
	drop := fake.Inject(placementfake.Fault{Drop: true})
	for range 3 {
		pc.ProviderGenerations(context.Background(), url.Values{}, 0)
	}
	ok, why := o.Healthy()
	if ok || !strings.Contains(why, "placement failing since") || !strings.Contains(why, "failed in a row") {
		t.Fatalf("healthz %v: %s", ok, why)
	}
	if ok, rwhy := o.Ready(); ok || rwhy != why {
		t.Fatalf("readyz %v: %s", ok, rwhy)
	}
	if s := o.Snapshot(); len(s.Failing) != 1 || s.Failing[0].Name != "placement" {
		t.Fatalf("page: %+v", s.Failing)
	}
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	o.LogDependencies(log)
	if n := strings.Count(buf.String(), "dependency failing"); n != 1 || !strings.Contains(buf.String(), "dependency=placement") {
		t.Fatalf("%d lines: %s", n, buf.String())
	}
	drop.Remove()
	if _, err := pc.ProviderGenerations(context.Background(), url.Values{}, 0); err != nil {
		t.Fatal(err)
	}
	if ok, why := o.Healthy(); !ok {
		t.Fatalf("healthz after Placement answered: %s", why)
	}
	buf.Reset()
	o.LogDependencies(log)
	if !strings.Contains(buf.String(), "dependency answering again") || strings.Contains(buf.String(), "failing") {
		t.Fatalf("%s", buf.String())
	}
}

type refusing struct{}

func (refusing) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, &url.Error{Op: "Get", URL: "http://127.0.0.1:6385/v1/nodes", Err: syscall.ECONNREFUSED}
}

// The plugin's service failing (three requests in a row), or a plugin
// call failing, shows in health with the error; an answer clears it.
func TestHealthNamesAFailingPluginService(t *testing.T) {
	o := ops.New(nil)
	rt := o.Metrics.PluginHTTP(map[string]string{"baremetal": "http://127.0.0.1:6385/"}, refusing{})
	for range 3 {
		req := httptest.NewRequest("GET", "http://127.0.0.1:6385/v1/nodes", nil)
		rt.RoundTrip(req)
	}
	if ok, why := o.Healthy(); ok || !strings.Contains(why, "baremetal failing") || !strings.Contains(why, "connection refused") {
		t.Fatalf("healthz %v: %s", ok, why)
	}
	src := ops.TimedSource(&source{failNodes: errors.New("plugin ironic: list_nodes: 503")}, o.Metrics)
	src.ListNodes(context.Background(), hostabi.ListNodesRequest{})
	if s := o.Snapshot(); len(s.Failing) != 2 || s.Failing[1].Name != "plugin" || !strings.Contains(s.Failing[1].Last, "503") {
		t.Fatalf("%+v", s.Failing)
	}
	good := o.Metrics.PluginHTTP(map[string]string{"baremetal": "http://127.0.0.1:6385/"}, answering{})
	good.RoundTrip(httptest.NewRequest("GET", "http://127.0.0.1:6385/v1/nodes", nil))
	ops.TimedSource(&source{}, o.Metrics).ListNodes(context.Background(), hostabi.ListNodesRequest{})
	if ok, why := o.Healthy(); !ok {
		t.Fatalf("healthz: %s", why)
	}
}

type answering struct{}

func (answering) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Status: "200 OK", Body: io.NopCloser(strings.NewReader("{}"))}, nil
}

// Keystone is failing when a login failed within the last interval, or
// the token is past its expiry; a session renewing in time is not.
func TestHealthNamesAFailingKeystone(t *testing.T) {
	now := time.Now()
	o := ops.New(func() time.Time { return now })
	s := &session{expires: now.Add(time.Hour)}
	o.Metrics.WatchAuth(s)
	if ok, why := o.Healthy(); !ok {
		t.Fatalf("healthz: %s", why)
	}
	s.failures.Store(1)
	if ok, why := o.Healthy(); ok || !strings.Contains(why, "keystone failing") {
		t.Fatalf("a failed login: healthz %v %s", ok, why)
	}
	now = now.Add(2 * time.Minute) // past the interval (1 minute by default), the token still valid
	if ok, why := o.Healthy(); !ok {
		t.Fatalf("an old failure: %s", why)
	}
	now = now.Add(2 * time.Hour) // the token expired and was not renewed
	if ok, why := o.Healthy(); ok || !strings.Contains(why, "keystone failing") {
		t.Fatalf("an expired token: healthz %v %s", ok, why)
	}
}
