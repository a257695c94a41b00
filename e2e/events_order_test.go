package e2e

import (
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/faultproxy"
	"github.com/rpengine/rpengine/internal/testing/ironictest"
)

// Changes before resyncs, against the real Ironic, RabbitMQ and
// Placement: while a full cycle lists a slow Ironic (each listing page
// held back 15 s by a proxy, as of its request; a node read not
// delayed: 5 pages, 75 s), each change reaches Placement through its
// notification's node sync, and the full cycle, whose first page is
// older than the changes, leaves those writes alone.
func TestEventsDuringASlowFullCycleE2E(t *testing.T) {
	const page = 15 * time.Second
	var slow atomic.Bool
	var delayed atomic.Int32
	via := func(target string) string {
		p, err := faultproxy.New(target, faultproxy.Faults{Hold: func(r *http.Request) time.Duration {
			if slow.Load() && r.URL.Path == "/v1/nodes" { // the listing's pages, not a node's read
				delayed.Add(1)
				return page
			}
			return 0
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		return p.URL()
	}
	r := newEventRigVia(t, via, "[plugin.config]", "page_size = 1")
	setInFile(t, r.cfg, `timeout = "30s"`, `timeout = "300s"`) // the slow listing is one plugin call
	var ns []string
	for i := range 4 {
		u := r.ironic.Create(t, ironictest.Spec{Name: "or-" + string(rune('a'+i)) + "-" + r.id, ResourceClass: "baremetal"})
		r.ironic.Available(t, u)
		ns = append(ns, u)
	}
	r.start()
	r.within(60*time.Second, "first full cycle", func() bool { return r.reserved(ns[3]) == 0 })
	r.within(60*time.Second, "bus connected and the connect's full cycle done", func() bool {
		return r.metric("rpengine_events_connected") == 1 && r.cycles() >= 2
	})
	time.Sleep(4 * time.Second)
	slow.Store(true)
	cycles := r.cycles()
	if err := r.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	r.within(20*time.Second, "the full cycle's listing under way", func() bool { return delayed.Load() >= 1 })
	var worst time.Duration
	for _, u := range ns {
		r.ironic.Maintenance(t, u, true)
		took := r.within(30*time.Second, "maintenance during the listing", func() bool { return r.reserved(u) == 1 })
		worst = max(worst, took)
		t.Logf("FIGURE maintenance reached Placement %.2f s after the Ironic call, during a full cycle's listing", took.Seconds())
	}
	if r.cycles() != cycles {
		t.Fatalf("the slow full cycle ended before the changes were made (%d pages delayed): the test proves nothing", delayed.Load())
	}
	r.within(4*time.Minute, "the slow full cycle done", func() bool { return r.cycles() > cycles })
	slow.Store(false)
	if n := countLines(r.logPath, "plugin call timed out") + countLines(r.logPath, "timeout"); n > 0 {
		t.Fatalf("%d timeouts in the log: the full cycle was to finish its listing", n)
	}
	for _, u := range ns {
		if got := r.reserved(u); got != 1 {
			t.Errorf("node %s: reserved %d after the full cycle whose listing predates its change; want 1", u, got)
		}
	}
	t.Logf("FIGURE worst of %d changes during a %d-page listing (%s a page): %.2f s", len(ns), delayed.Load(), page, worst.Seconds())
	if worst > 5*time.Second {
		t.Errorf("a change waited %.1f s during the full cycle: node syncs were to run beside it", worst.Seconds())
	}
}

// setInFile replaces old with new in the file at path, once.
func setInFile(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), old) {
		t.Fatalf("%s: %q not found (%v)", path, old, err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}
