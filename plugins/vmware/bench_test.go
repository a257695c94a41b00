package main

// Figures of the VMware plugin. Rerun (vcsim built by scripts/vcsim/install.sh):
//
//	go test -run '^$' -bench . -benchtime 5x -count 3 ./plugins/vmware/
//
// The wasm runs use the engine's default isolation (the plugin host child
// process); native runs the same plugin code in process behind the same
// gate, session and ABI encoding (wasmhost.Native).

import (
	"context"
	"encoding/json"
	"github.com/rpengine/rpengine/internal/testing/guesttest"
	"os"
	"testing"
	"time"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
	"github.com/rpengine/rpengine/internal/testing/vcsimtest"
	"github.com/rpengine/rpengine/internal/vcsession"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// bigModel is 100 clusters of 20 hosts with 2 datastores.
var bigModel = vcsimtest.Model{Clusters: 100, Hosts: 20, Datastores: 2, StartTimeout: 10 * time.Minute}

// BenchmarkList100x20 lists 100 clusters × 20 hosts: one container view,
// one RetrievePropertiesEx, the arithmetic and the answer.
func BenchmarkList100x20(b *testing.B) {
	sim := vcsimtest.Start(b, bigModel)
	ctx := context.Background()
	raw, _ := json.Marshal(testConfig)
	check := func(b *testing.B, nodes []hostabi.Node, err error) {
		if err != nil || len(nodes) != bigModel.Clusters {
			b.Fatalf("%d nodes, %v", len(nodes), err)
		}
	}
	b.Run("wasm", func(b *testing.B) {
		p, _ := loadWasm(b, sim.URL, testConfig, wasmhost.Options{})
		for b.Loop() {
			nodes, err := p.ListNodes(ctx, hostabi.ListNodesRequest{})
			check(b, nodes, err)
		}
	})
	b.Run("native", func(b *testing.B) {
		sess, _ := vcsession.New(sim.URL, vcsimtest.User, vcsimtest.Password, nil)
		defer sess.Close(ctx)
		p, err := guesttest.Native(ctx, &plugin{}, raw, wasmhost.Options{
			Services: map[string]string{"vcenter": sim.URL}, Credentials: map[string]wasmhost.Credential{"vcenter": sess}})
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close(ctx)
		for b.Loop() {
			nodes, err := p.ListNodes(ctx, hostabi.ListNodesRequest{})
			check(b, nodes, err)
		}
	})
}

// BenchmarkLoad is loading vmware.wasm to a configured instance: cold
// (an empty compilation cache: wazero compiles the 26 MB module) and
// cached (the compiled code from the cache dir).
func BenchmarkLoad(b *testing.B) {
	wasm := plugintest.Build(b, "plugins/vmware")
	raw, _ := json.Marshal(testConfig)
	ctx := context.Background()
	load := func(b *testing.B, cache string) {
		p, err := wasmhost.Load(ctx, wasm, raw, wasmhost.Options{CacheDir: cache,
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
	b.Run("cached", func(b *testing.B) {
		dir := b.TempDir()
		load(b, dir)
		for b.Loop() {
			load(b, dir)
		}
	})
}

// BenchmarkMemoryNeeded finds the smallest memory_limit (to 2 MiB) under
// which the plugin lists 100 × 20 without failing: the guest's high-water
// mark, as an operator must budget it. Reported as MiB; the time is
// meaningless.
func BenchmarkMemoryNeeded(b *testing.B) {
	sim := vcsimtest.Start(b, bigModel)
	ctx := context.Background()
	fits := func(mib uint64) bool {
		p, _ := loadWasm(b, sim.URL, testConfig, wasmhost.Options{MemoryLimit: mib << 20, CallTimeout: 2 * time.Minute})
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
