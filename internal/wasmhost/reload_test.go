package wasmhost_test

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/guesttest"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// install puts the module at src in place at dst the way a deploy should:
// write aside, then rename.
func install(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	tmp := dst + ".new"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		t.Fatal(err)
	}
}

func nodeCount(t *testing.T, src interface {
	ListNodes(context.Context, hostabi.ListNodesRequest) ([]hostabi.Node, error)
}) int {
	t.Helper()
	nodes, err := src.ListNodes(context.Background(), hostabi.ListNodesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return len(nodes)
}

// The plugin is swapped on SIGHUP and when its file changes; a broken
// replacement (not a module, or one that refuses the config) is refused
// and the old plugin keeps serving.
func TestReloadOnSIGHUPAndFileChangeKeepsTheOldPluginOnFailure(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	path := filepath.Join(t.TempDir(), "plugin.wasm")
	install(t, fakeWasm(t), path)
	// The raw plugin ignores its config and lists one node; the fake lists 3.
	raw := guesttest.Build(t, "../../plugins/hostile/raw")
	cfg := []byte(`{"nodes": 3}`)
	r, err := wasmhost.NewReloader(ctx, path, cfg, wasmhost.Options{CacheDir: guesttest.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	// First SIGHUP alone, so that the edit it announces is not also seen
	// by the poll; then the poll alone.
	reloads := r.Watch(ctx, hup, 0)
	next := func(want string) {
		t.Helper()
		select {
		case why := <-reloads:
			if why != want {
				t.Fatalf("reload asked for %q, want %q", why, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no reload request (%s)", want)
		}
	}
	if r.Name() != "fake" || nodeCount(t, r) != 3 {
		t.Fatalf("start: %s", r.Name())
	}

	// SIGHUP: a new module is taken up on request, not before.
	os.WriteFile(path, mustRead(t, raw), 0o644) // in place: mtime and content change
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	next("hangup")
	if err := r.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if r.Name() != "raw" || nodeCount(t, r) != 1 {
		t.Fatalf("after SIGHUP: %s", r.Name())
	}
	reloads = r.Watch(ctx, nil, 10*time.Millisecond)

	// File change: the fake again.
	install(t, fakeWasm(t), path)
	next("plugin file changed")
	if err := r.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if r.Name() != "fake" || nodeCount(t, r) != 3 {
		t.Fatalf("after the file changed: %s", r.Name())
	}

	// Broken replacements: the fake keeps serving.
	broken := []struct{ name, src, want string }{
		{"not a module", writeTemp(t, "garbage"), "not a valid Wasm module"},
		{"refuses the config", hostileWasm(t), `unknown field "nodes"`},
	}
	for _, b := range broken {
		install(t, b.src, path)
		next("plugin file changed")
		err := r.Reload(ctx)
		if err == nil || !strings.Contains(err.Error(), b.want) || !strings.Contains(err.Error(), path) {
			t.Fatalf("%s: reload err = %v, want it to name %s and say %q", b.name, err, path, b.want)
		}
		if r.Name() != "fake" || nodeCount(t, r) != 3 {
			t.Fatalf("%s: the old plugin stopped serving: %s", b.name, r.Name())
		}
	}
	// A failed file is not retried until it changes again.
	select {
	case why := <-reloads:
		t.Fatalf("asked again (%s) for a file already tried", why)
	case <-time.After(50 * time.Millisecond):
	}
}

// Calls keep succeeding while the plugin is swapped under them: a swap
// waits for the call in flight and never closes a plugin in use.
func TestSwapsFallBetweenCalls(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "plugin.wasm")
	install(t, fakeWasm(t), path)
	r, err := wasmhost.NewReloader(ctx, path, []byte(`{"nodes": 200}`), wasmhost.Options{CacheDir: guesttest.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	var stop atomic.Bool
	var wg sync.WaitGroup
	var calls atomic.Int64
	errs := make(chan error, 4)
	for range 2 {
		wg.Go(func() {
			for !stop.Load() {
				if _, err := r.ListNodes(ctx, hostabi.ListNodesRequest{}); err != nil {
					errs <- err
					return
				}
				calls.Add(1)
			}
		})
	}
	for range 3 {
		if err := r.Reload(ctx); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a call failed during the swaps: %v", err)
	}
	if calls.Load() == 0 {
		t.Fatal("no call ran")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.wasm")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
