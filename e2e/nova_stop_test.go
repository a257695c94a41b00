package e2e

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/ironictest"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// TestStopDuringIronicListing sends SIGTERM to `engine run` while the Ironic
// plugin is listing nodes (as in a cloud beside nova-compute, where a
// listing of thousands of nodes takes seconds): the stop cancels the
// listing, and that is an ordinary stop, not an ERROR or a failed cycle.
func TestStopDuringIronicListing(t *testing.T) {
	placementURL := placementtest.Shared(t)
	ironicURL := ironictest.StartReal(t)
	plugin := plugintest.Build(t, "plugins/ironic")
	c := ironictest.NewClient(t, ironicURL)
	c.Available(t, c.Create(t, ironictest.Spec{Name: "stop-0", ResourceClass: "baremetal-gold"}))

	gate := newListingGate(t, ironicURL)
	cfg := ironicConfig(t, "stop-e2e", placementURL, plugin, gate.url, "", "")
	logPath := filepath.Join(filepath.Dir(cfg), "engine.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	gate.arm()
	cmd := exec.Command(engineBin(t), "run", "--config", cfg)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-gate.entered:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("the engine never listed nodes")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err = <-exited:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("the engine did not stop within a minute of SIGTERM")
	}
	gate.release()
	b, _ := os.ReadFile(logPath)
	logs := string(b)
	if err != nil || strings.Contains(logs, "level=ERROR") || !strings.Contains(logs, "not counted") {
		t.Fatalf("SIGTERM during a listing: exit %v, log:\n%s", err, logs)
	}
}

// listingGate passes requests to Ironic, except that once armed it holds
// the first node listing until released (or its client gives up).
type listingGate struct {
	url     string
	mu      sync.Mutex
	armed   bool
	entered chan struct{}
	hold    chan struct{}
}

func newListingGate(t *testing.T, ironicURL string) *listingGate {
	target, _ := url.Parse(ironicURL)
	g := &listingGate{entered: make(chan struct{}), hold: make(chan struct{})}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		held := g.armed && r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/v1/nodes")
		if held {
			g.armed = false
			close(g.entered)
		}
		g.mu.Unlock()
		if held {
			select {
			case <-g.hold:
			case <-r.Context().Done():
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { g.release(); srv.Close() })
	g.url = srv.URL
	return g
}

func (g *listingGate) arm() { g.mu.Lock(); g.armed = true; g.mu.Unlock() }

func (g *listingGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.hold:
	default:
		close(g.hold)
	}
}
