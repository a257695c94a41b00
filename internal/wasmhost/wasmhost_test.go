package wasmhost_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/guesttest"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// The plugins these tests load, built once per test process.
func fakeWasm(t testing.TB) string    { return guesttest.Build(t, "../../plugins/fake") }
func hostileWasm(t testing.TB) string { return guesttest.Build(t, "../../plugins/hostile") }
func minimalWasm(t testing.TB) string { return guesttest.Build(t, "testdata/minimal") }

func load(t testing.TB, wasm string, cfg any, opts wasmhost.Options) (*wasmhost.Plugin, error) {
	t.Helper()
	return guesttest.WasmLoader(wasm, opts)(t, cfg)
}

func mustLoad(t testing.TB, wasm string, cfg any, opts wasmhost.Options) *wasmhost.Plugin {
	t.Helper()
	return guesttest.WasmLoader(wasm, opts).OK(t, cfg)
}

var isolations = []wasmhost.Isolation{wasmhost.ChildProcess, wasmhost.InProcess}

func TestFakePluginListsGeneratedNodes(t *testing.T) {
	for _, iso := range isolations {
		t.Run(iso.String(), func(t *testing.T) {
			p := mustLoad(t, fakeWasm(t), map[string]any{"nodes": 25, "seed": 7, "instance_fraction": 0.5},
				wasmhost.Options{Isolation: iso})
			nodes, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if len(nodes) != 25 {
				t.Fatalf("got %d nodes, want 25", len(nodes))
			}
			inst, err := p.ListInstances(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			withInstance := 0
			for _, n := range nodes {
				if n.InstanceUUID != "" {
					withInstance++
				}
			}
			if len(inst) != withInstance || withInstance == 0 {
				t.Fatalf("instances %d, nodes with instance_uuid %d", len(inst), withInstance)
			}
			if p.Name() != "fake" {
				t.Fatalf("name %q", p.Name())
			}
		})
	}
}

func TestBadPluginConfigIsRefusedAtLoad(t *testing.T) {
	wasm := fakeWasm(t)
	_, err := load(t, wasm, map[string]any{"nodez": 3}, wasmhost.Options{})
	var e *wasmhost.Error
	if !errors.As(err, &e) || e.Kind != wasmhost.KindPlugin || e.Plugin != wasm || e.Op != "start" ||
		!strings.Contains(err.Error(), `configure: fake plugin config: json: unknown field "nodez"`) {
		t.Fatalf("err = %v, want a plugin error naming the file and the unknown key", err)
	}
}

// Each fault of the fake plugin fails its call with the right kind, and
// the next call gets a working instance, in both isolations.
func TestFaultsAreContainedAndTheInstanceRecovers(t *testing.T) {
	cases := []struct {
		fault string
		kind  wasmhost.Kind
		want  string
	}{
		{"error", wasmhost.KindPlugin, "plugin fake: list_nodes: injected failure in list_nodes"},
		{"panic", wasmhost.KindTrap, "plugin fake: list_nodes: panicked: injected panic in list_nodes"},
		{"exit", wasmhost.KindTrap, "plugin fake: list_nodes: exited with code 3"},
		{"spin", wasmhost.KindTimeout, "plugin fake: list_nodes: exceeded the time limit of 500ms (plugin.timeout)"},
		{"hog", wasmhost.KindOutOfMemory, "plugin fake: list_nodes: out of memory (limit 64 MiB)"},
	}
	for _, iso := range isolations {
		for _, c := range cases {
			t.Run(iso.String()+"/"+c.fault, func(t *testing.T) {
				opts := wasmhost.Options{MemoryLimit: 64 << 20, Isolation: iso}
				if c.fault == "spin" { // only the spin: a slow machine may take long to fail otherwise
					opts.CallTimeout = 500 * time.Millisecond
				}
				p := mustLoad(t, fakeWasm(t), map[string]any{"nodes": 3, "fault": c.fault}, opts)
				nodes, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{})
				if nodes != nil || !wasmhost.IsKind(err, c.kind) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("nodes %v, err = %v, want %s error %q", nodes, err, c.kind, c.want)
				}
				// The other operation works on a fresh or intact instance.
				if _, err := p.ListInstances(context.Background()); err != nil {
					t.Fatalf("after %s: %v", c.fault, err)
				}
			})
		}
	}
}

// A panic's message and trace reach the error, the trace in Output.
func TestGuestOutputOfAFailedCallIsKept(t *testing.T) {
	p := mustLoad(t, fakeWasm(t), map[string]any{"nodes": 1, "fault": "panic"}, wasmhost.Options{})
	_, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{})
	var e *wasmhost.Error
	if !errors.As(err, &e) || !strings.Contains(e.Output, "goroutine") || !strings.Contains(e.Output, "main.(*fake).fault") {
		t.Fatalf("err = %v, output %q: want the guest's panic trace", err, e.Output)
	}
}

// If the plugin host process dies between calls, the next call starts a
// new one.
func TestADeadPluginHostIsReplaced(t *testing.T) {
	p := mustLoad(t, fakeWasm(t), map[string]any{"nodes": 2}, wasmhost.Options{})
	if !wasmhost.KillHostForTest(p) {
		t.Fatal("no plugin host process")
	}
	if nodes, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{}); err != nil || len(nodes) != 2 {
		t.Fatalf("after the plugin host died: %d nodes, %v", len(nodes), err)
	}
}

// The caller's own deadline and cancellation end a call too, and say so.
func TestTheCallersDeadlineIsHonoured(t *testing.T) {
	p := mustLoad(t, fakeWasm(t), map[string]any{"nodes": 1, "fault": "spin"}, wasmhost.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := p.ListNodes(ctx, hostabi.ListNodesRequest{})
	if !wasmhost.IsKind(err, wasmhost.KindTimeout) || !strings.Contains(err.Error(), "the caller's deadline passed") {
		t.Fatalf("err = %v", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err = p.ListNodes(ctx, hostabi.ListNodesRequest{})
	if !wasmhost.IsKind(err, wasmhost.KindTimeout) || !strings.Contains(err.Error(), "canceled by the caller") {
		t.Fatalf("err = %v", err)
	}
}

// Calls from many goroutines are serialised on the one instance.
func TestConcurrentCallsAreSerialised(t *testing.T) {
	p := mustLoad(t, fakeWasm(t), map[string]any{"nodes": 50, "seed": 1}, wasmhost.Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for range 8 {
		wg.Go(func() {
			for range 5 {
				nodes, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{})
				if err == nil && len(nodes) != 50 {
					err = errors.New("wrong node count")
				}
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Optional operations are capabilities detected at load: exported and
// declared by the plugin.
func TestCapabilitiesAreDetectedAtLoad(t *testing.T) {
	fake := mustLoad(t, fakeWasm(t), map[string]any{"nodes": 1}, wasmhost.Options{})
	minimal := mustLoad(t, minimalWasm(t), nil, wasmhost.Options{})
	if !fake.Supports(hostabi.ExportConfirmDeleted) || !fake.Supports(hostabi.ExportListNodes) {
		t.Errorf("fake: %+v", fake.Info())
	}
	if minimal.Supports(hostabi.ExportConfirmDeleted) || !minimal.Supports(hostabi.ExportListNodes) {
		t.Errorf("minimal: %+v", minimal.Info())
	}
	_, _, err := minimal.ConfirmDeleted(context.Background(), []string{"x"})
	if !wasmhost.IsKind(err, wasmhost.KindRefused) || !strings.Contains(err.Error(), "plugin minimal: confirm_deleted: the plugin does not support") {
		t.Errorf("err = %v", err)
	}
}

func TestInspectReportsWhatThePluginSays(t *testing.T) {
	info, err := wasmhost.Inspect(context.Background(), hostileWasm(t), wasmhost.Options{CacheDir: guesttest.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	if info.ABIVersion != hostabi.Version || info.Name != "hostile" ||
		strings.Join(info.Operations, ",") != hostabi.ExportConfirmDeleted ||
		strings.Join(info.Imports, ",") != "rpengine.http_request,rpengine.http_response_read,rpengine.log" {
		t.Fatalf("info %+v", info)
	}
}

// A Go guest whose live data fits, with GC headroom it would not have
// without GOMEMLIMIT, survives; without it, the same guest dies.
func TestANearLimitGuestSurvivesThanksToGOMEMLIMIT(t *testing.T) {
	cfg := map[string]any{"attack": "near_limit", "live_mib": 36, "churn_mib": 512}
	opts := wasmhost.Options{MemoryLimit: 64 << 20, CallTimeout: 30 * time.Second}
	p := mustLoad(t, hostileWasm(t), cfg, opts)
	nodes, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{})
	if err != nil || len(nodes) != 1 || !strings.HasPrefix(nodes[0].Name, "kept 36 MiB") {
		t.Fatalf("with GOMEMLIMIT: %v %v", nodes, err)
	}
	p = mustLoad(t, hostileWasm(t), cfg, wasmhost.WithoutGOMEMLIMIT(opts))
	if _, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{}); !wasmhost.IsKind(err, wasmhost.KindOutOfMemory) {
		t.Fatalf("without GOMEMLIMIT: err = %v, want out of memory (else this test proves nothing)", err)
	}
}

func TestTheRealClockIsACapability(t *testing.T) {
	clock := func(opts wasmhost.Options) time.Time {
		p := mustLoad(t, hostileWasm(t), map[string]any{"attack": "clock"}, opts)
		nodes, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		ts, err := time.Parse(time.RFC3339Nano, nodes[0].Fault)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	if ts := clock(wasmhost.Options{}); time.Since(ts) < 365*24*time.Hour {
		t.Errorf("without the grant the guest read the real time %v", ts)
	}
	if ts := clock(wasmhost.Options{Clock: true}); time.Since(ts).Abs() > time.Hour {
		t.Errorf("with the grant the guest read %v", ts)
	}
}

func TestPluginLogsReachTheEngineLogCapped(t *testing.T) {
	var h recorder
	p := mustLoad(t, hostileWasm(t), map[string]any{"attack": "log", "lines": 1200}, wasmhost.Options{Logger: h.logger()})
	if _, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{}); err != nil {
		t.Fatal(err)
	}
	lines := h.lines()
	if len(lines) != 1001 || lines[0] != "INFO hostile line 0 plugin=hostile" ||
		lines[1000] != "WARN 200 log lines of this call dropped (limit 1000) plugin=hostile" {
		t.Fatalf("%d lines: first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
}

func TestResponsesAreCapped(t *testing.T) {
	p := mustLoad(t, fakeWasm(t), map[string]any{"nodes": 1000}, wasmhost.Options{MaxResponse: 64 << 10})
	_, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{})
	if !wasmhost.IsKind(err, wasmhost.KindBadAnswer) || !strings.Contains(err.Error(), "exceeds the 65536-byte cap") {
		t.Fatalf("err = %v", err)
	}
}
