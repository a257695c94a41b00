package wasmhost_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/guesttest"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// The benchmarks behind RATIONALE.md. Run them with
//
//	go test -run '^$' -bench . -count 6 ./internal/wasmhost ./plugins/fake
//
// and compare medians; absolute times move with the machine's load.

// limits are the ways to bound a call's time, and the baseline of none.
var limits = []struct {
	name string
	iso  wasmhost.Isolation
}{
	{"none", wasmhost.InProcessUnlimited},
	{"close-on-context-done", wasmhost.InProcess},
	{"child-process", wasmhost.ChildProcess},
}

// BenchmarkCallOverhead is the cost of one call that does nothing: the
// ABI (alloc, copy in, call, copy out, free, JSON of a tiny answer) and,
// for the child, the pipe round trip.
func BenchmarkCallOverhead(b *testing.B) {
	for _, l := range limits {
		b.Run(l.name, func(b *testing.B) {
			p := mustLoad(b, minimalWasm(b), nil, wasmhost.Options{Isolation: l.iso})
			for b.Loop() {
				if _, err := p.ListInstances(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGuestWork is ordinary Go guest code (JSON and maps over 1,000
// nodes, 3 rounds) under each time limit: the cost of the mechanism on
// the guest itself.
func BenchmarkGuestWork(b *testing.B) {
	for _, l := range limits {
		b.Run(l.name, func(b *testing.B) {
			p := mustLoad(b, hostileWasm(b), map[string]any{"attack": "work", "rounds": 3}, wasmhost.Options{Isolation: l.iso})
			for b.Loop() {
				if _, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkList10k is the fake plugin's 10,000-node listing end to end
// under each time limit (plugins/fake compares it with native code).
func BenchmarkList10k(b *testing.B) {
	for _, l := range limits {
		b.Run(l.name, func(b *testing.B) {
			p := mustLoad(b, fakeWasm(b), map[string]any{"nodes": 10000, "seed": 1}, wasmhost.Options{Isolation: l.iso})
			for b.Loop() {
				if _, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRestartToFirstCall is an engine restart as the plugin sees it,
// with a warm compilation cache: start the plugin host, load the compiled
// code, instantiate, configure, describe, and answer a first listing.
func BenchmarkRestartToFirstCall(b *testing.B) {
	wasm := fakeWasm(b)
	opts := wasmhost.Options{CacheDir: guesttest.CacheDir()}
	cfg := []byte(`{"nodes": 100}`)
	warm, err := wasmhost.Load(context.Background(), wasm, cfg, opts) // fills the cache
	if err != nil {
		b.Fatal(err)
	}
	warm.Close(context.Background())
	for b.Loop() {
		p, err := wasmhost.Load(context.Background(), wasm, cfg, opts)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{}); err != nil {
			b.Fatal(err)
		}
		p.Close(context.Background())
	}
}

// BenchmarkTimeLimitCost interleaves the three ways to run a call, one
// call each per round, so that the machine's load drifts alike for all,
// and reports each one's median and its ratio to no limit at all. One
// "op" is 9 rounds; read the metrics, not ns/op.
func BenchmarkTimeLimitCost(b *testing.B) {
	const rounds = 9
	for _, w := range []struct {
		name string
		wasm func(testing.TB) string
		cfg  map[string]any
	}{
		{"guest-work", hostileWasm, map[string]any{"attack": "work", "rounds": 3}},
		{"list-10k", fakeWasm, map[string]any{"nodes": 10000, "seed": 1}},
	} {
		b.Run(w.name, func(b *testing.B) {
			ps := make([]*wasmhost.Plugin, len(limits))
			times := make([][]time.Duration, len(limits))
			for i, l := range limits {
				ps[i] = mustLoad(b, w.wasm(b), w.cfg, wasmhost.Options{Isolation: l.iso})
			}
			for range b.N * rounds {
				for i, p := range ps {
					start := time.Now()
					if _, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{}); err != nil {
						b.Fatal(err)
					}
					times[i] = append(times[i], time.Since(start))
				}
			}
			base := median(times[0])
			for i, l := range limits {
				m := median(times[i])
				b.ReportMetric(float64(m.Microseconds())/1000, l.name+"-ms")
				if i > 0 {
					b.ReportMetric(float64(m)/float64(base), l.name+"/none")
				}
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkSpinningGuest is a guest that never returns, under a 100 ms
// limit: how long past the limit the call returns ("late-ms"), and how
// long the next call takes, a new plugin host included ("recover-ms").
func BenchmarkSpinningGuest(b *testing.B) {
	const limit = 500 * time.Millisecond
	for _, l := range limits[1:] {
		b.Run(l.name, func(b *testing.B) {
			p := mustLoad(b, fakeWasm(b), map[string]any{"nodes": 1, "fault": "spin"},
				wasmhost.Options{Isolation: l.iso, CallTimeout: limit})
			var late, recovery []time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{}); !wasmhost.IsKind(err, wasmhost.KindTimeout) {
					b.Fatal(err)
				}
				late = append(late, time.Since(start)-limit)
				start = time.Now()
				if _, err := p.ListInstances(context.Background()); err != nil {
					b.Fatal(err)
				}
				recovery = append(recovery, time.Since(start))
			}
			b.ReportMetric(float64(median(late).Microseconds())/1000, "late-ms")
			b.ReportMetric(float64(median(recovery).Microseconds())/1000, "recover-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}
