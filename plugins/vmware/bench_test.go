//go:build !wasip1

package main

// Figures of the VMware plugin. Rerun (vcsim built by scripts/vcsim/install.sh;
// PROFILE.md has the figures and how to reuse one running vcsim):
//
//	make plugins
//	RPENGINE_PLUGIN_DIR=$PWD/build/plugins go test -run '^$' -bench . -benchtime 1x -count 1 -timeout 60m ./plugins/vmware/

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/guesttest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
	"github.com/rpengine/rpengine/internal/testing/vcsimtest"
	"github.com/rpengine/rpengine/internal/vcsession"
	"github.com/rpengine/rpengine/internal/wasmhost"
	"github.com/rpengine/rpengine/plugins/vmware/vcenter"
)

// bigModel is 100 clusters of 20 hosts with 2 datastores.
var bigModel = vcsimtest.Model{Clusters: 100, Hosts: 20, Datastores: 2, StartTimeout: 10 * time.Minute}

// envBigSim names a vcsim already running bigModel (its base URL), so
// that profiling runs need not wait minutes for each start.
const envBigSim = "RPENGINE_VCSIM_100X20"

func bigSim(b *testing.B) string {
	if u := os.Getenv(envBigSim); u != "" {
		return u
	}
	return vcsimtest.Start(b, bigModel).URL
}

// BenchmarkList100x20 lists 100 clusters × 20 hosts (one container view,
// one RetrievePropertiesEx, the arithmetic and the answer) three ways
// interleaved in the same run (guesttest.Compare):
//   - native: the plugin's code in process, HTTP straight to vcsim with
//     the host's session cookie;
//   - native+abi: the same code behind the SDK's dispatch, the host's
//     gate and session and the answer's encoding (wasmhost.Native);
//   - wasm: the built vmware.wasm as the engine runs it (the plugin host
//     process, the same gate and session).
//
// Beside the wall times (vcsim's own time included) it reports each
// variant's median CPU time (this process and the plugin host, not
// vcsim), which the machine's load does not move.
func BenchmarkList100x20(b *testing.B) {
	sim := bigSim(b)
	ctx := context.Background()
	raw, _ := json.Marshal(testConfig)
	sess, _ := vcsession.New(sim, vcsimtest.User, vcsimtest.Password, nil)
	defer sess.Close(ctx)
	cfg, err := vcenter.ParseConfig(raw)
	if err != nil {
		b.Fatal(err)
	}
	native := vcenter.New(cfg, direct(b, sim, sess), nil)
	abi, err := guesttest.Native(ctx, &plugin{}, raw, wasmhost.Options{
		Services: map[string]string{"vcenter": sim}, Credentials: map[string]wasmhost.Credential{"vcenter": sess}})
	if err != nil {
		b.Fatal(err)
	}
	defer abi.Close(ctx)
	wasm, _ := loadWasm(b, sim, testConfig, wasmhost.Options{})
	check := func(tb testing.TB, nodes []hostabi.Node, err error) {
		if err != nil || len(nodes) != bigModel.Clusters {
			tb.Fatalf("%d nodes, %v", len(nodes), err)
		}
	}
	cpu := cpuTimes{}
	variant := func(name string, list func() ([]hostabi.Node, error)) guesttest.Variant {
		return guesttest.Variant{Name: name, Run: func(tb testing.TB) {
			var nodes []hostabi.Node
			var err error
			cpu.wrap(name, func() { nodes, err = list() })()
			check(tb, nodes, err)
		}}
	}
	plugin := func(p *wasmhost.Plugin) func() ([]hostabi.Node, error) {
		return func() ([]hostabi.Node, error) { return p.ListNodes(ctx, hostabi.ListNodesRequest{}) }
	}
	guesttest.Compare(b, 5, []guesttest.Variant{
		variant("native", func() ([]hostabi.Node, error) { return native.ListNodes(hostabi.ListNodesRequest{}) }),
		variant("native+abi", plugin(abi)),
		variant("wasm", plugin(wasm)),
	}, guesttest.PluginRatios)
	// CPU of the engine's side and of the plugin host, not vcsim's: what
	// the plugin's code costs, whatever the machine's load.
	for _, v := range []string{"native", "native+abi", "wasm"} {
		b.ReportMetric(cpu.median(v), v+"-cpu-ms")
	}
	if n := cpu.median("native"); n > 0 {
		b.ReportMetric(cpu.median("wasm")/n, "wasm/native-cpu")
	}
}

// direct is the native variant's transport: the plugin's URL (host =
// the service name) sent to vcsim with the session's cookie, as the
// host's gate does.
func direct(b *testing.B, sim string, sess *vcsession.Session) http.RoundTripper {
	u, err := url.Parse(sim)
	if err != nil {
		b.Fatal(err)
	}
	return rtFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.URL.Scheme, r.URL.Host, r.Host = u.Scheme, u.Host, u.Host
		if err := sess.Apply(r.Context(), r); err != nil {
			return nil, err
		}
		return http.DefaultTransport.RoundTrip(r)
	})
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// BenchmarkLoad is loading vmware.wasm to a configured instance: cold
// (an empty compilation cache: wazero compiles the 26 MB module), cached
// (the compiled code from the cache dir) and cached-in-process (the same
// without the plugin host process, so that -cpuprofile sees the load:
// how much of a warm start is wazero validating the unchanged module,
// PROFILE.md "Warm start").
func BenchmarkLoad(b *testing.B) {
	wasm := plugintest.Build(b, "plugins/vmware")
	raw, _ := json.Marshal(testConfig)
	ctx := context.Background()
	iso := wasmhost.ChildProcess
	load := func(b *testing.B, cache string) {
		p, err := wasmhost.Load(ctx, wasm, raw, wasmhost.Options{CacheDir: cache, Isolation: iso,
			Services: map[string]string{"vcenter": "http://127.0.0.1:9"}})
		if err != nil {
			b.Fatal(err)
		}
		p.Close(ctx)
	}
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			dir, _ := os.MkdirTemp("", "vmware-cold-")
			b.StartTimer()
			load(b, dir)
			b.StopTimer()
			os.RemoveAll(dir)
			b.StartTimer()
		}
	})
	cached := func(b *testing.B) {
		dir := b.TempDir()
		load(b, dir)
		for b.Loop() {
			load(b, dir)
		}
	}
	b.Run("cached", cached)
	iso = wasmhost.InProcess
	b.Run("cached-in-process", cached)
}

// BenchmarkMemoryNeeded finds the smallest memory_limit (to 2 MiB) under
// which the plugin lists 100 × 20 without failing: the guest's high-water
// mark, as an operator must budget it. Reported as MiB; the time is
// meaningless.
func BenchmarkMemoryNeeded(b *testing.B) {
	sim := bigSim(b)
	ctx := context.Background()
	fits := func(mib uint64) bool {
		p, _ := loadWasm(b, sim, testConfig, wasmhost.Options{MemoryLimit: mib << 20, CallTimeout: 2 * time.Minute})
		defer p.Close(ctx)
		nodes, err := p.ListNodes(ctx, hostabi.ListNodesRequest{})
		return err == nil && len(nodes) == bigModel.Clusters
	}
	for b.Loop() {
		lo, hi := uint64(16), uint64(256) // lo fails or is the floor, hi fits
		if !fits(hi) {
			b.Fatal("does not fit in 256 MiB")
		}
		for hi-lo > 2 {
			mid := (lo + hi) / 2
			if fits(mid) {
				hi = mid
			} else {
				lo = mid
			}
		}
		b.ReportMetric(float64(hi), "MiB-needed")
	}
}
