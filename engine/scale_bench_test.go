package engine_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// fakeChildEnv makes the test binary serve the fake Placement and nothing
// else: the scale benchmarks run it in a child process, so the CPU they
// report is the engine's alone, as make bench measures it.
const fakeChildEnv = "RPENGINE_TEST_FAKE_PLACEMENT_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(fakeChildEnv) == "1" {
		fake := placementfake.New(placementfake.WithSeed(7))
		if err := seedOwned(fake, os.Getenv(fakeSeedEnv)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(fake.URL())
		io.Copy(io.Discard, os.Stdin) // serve until the parent closes stdin
		fake.Close()
		return
	}
	os.Exit(m.Run())
}

// fakeChild starts the fake Placement in a child process and returns its
// URL; it stops when the benchmark ends.
func fakeChild(b *testing.B, seed ...string) string {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fakeChildEnv+"=1", fakeSeedEnv+"="+strings.Join(seed, ","))
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("fake placement child: %v", err)
	}
	return strings.TrimSpace(line)
}

// cpuTime is this process's user+system time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// scaleFleet is n nodes with random-looking uuids (a real source's order),
// two classes, as make bench's fleet.
func scaleFleet(n int) []hostabi.Node {
	out := make([]hostabi.Node, n)
	for i := range out {
		h := uint64(i+1) * 0x9e3779b97f4a7c15
		out[i] = hostabi.Node{UUID: fmt.Sprintf("%08x-%04x-4%03x-8000-%012d", uint32(h>>32), uint16(h>>16), i%4096, i),
			ResourceClass: []string{"baremetal-gold", "baremetal-silver"}[i%2],
			PowerState:    "power on", ProvisionState: "available"}
	}
	return out
}

// BenchmarkIdleCycle100k is one idle cycle at 100,000 nodes with the fake
// Placement in a child process, as make bench's "engine CPU per idle
// cycle" row: cpu-ms/cycle is the engine's CPU (the source is in memory,
// no plugin), heap-MB the live heap after the cycle. The cold cycle that
// creates the providers first takes about a minute.
//
//	go test -run '^$' -bench IdleCycle100k -benchtime 5x ./engine
func BenchmarkIdleCycle100k(b *testing.B) { benchIdleCycle(b, 100_000) }

func benchIdleCycle(b *testing.B, n int) {
	ctx := context.Background()
	eng := coldEngine(b, n)
	var cpu time.Duration
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for b.Loop() {
		cpu += idleCycle(ctx, b, eng, n)
	}
	b.StopTimer()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	runtime.KeepAlive(eng)
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/cycle")
	// Collections per cycle: what the garbage costs, whatever the load.
	b.ReportMetric(float64(ms.NumGC-before.NumGC-1)/float64(b.N), "gc/cycle")
	b.ReportMetric(float64(ms.HeapAlloc)/1e6, "heap-MB")
}

// BenchmarkSettledIdle100k is BenchmarkIdleCycle100k with the
// settled providers' short way through the syncs (sync.go, isSettled) on
// and off in alternate cycles of one engine, so the load falls on both
// alike. Each cycle starts after a collection, outside the measure: a
// cycle allocates less than the heap's headroom, so neither way pays
// for one (alternate cycles would otherwise put every collection on the
// same side). judged-cpu-ms and looked-cpu-ms are the engine's CPU per
// cycle each way, garbage collection left out.
//
//	go test -run '^$' -bench SettledIdle100k -benchtime 5x ./engine
func BenchmarkSettledIdle100k(b *testing.B) {
	ctx := context.Background()
	eng := coldEngine(b, 100_000)
	defer engine.JudgeAtIntend(true)
	var cpu [2]time.Duration
	for b.Loop() {
		for way, on := range []bool{true, false} {
			engine.JudgeAtIntend(on)
			runtime.GC()
			cpu[way] += idleCycle(ctx, b, eng, 100_000)
		}
	}
	b.ReportMetric(float64(cpu[0].Milliseconds())/float64(b.N), "judged-cpu-ms")
	b.ReportMetric(float64(cpu[1].Milliseconds())/float64(b.N), "looked-cpu-ms")
}

// coldEngine is an engine that has created n providers in a fake
// Placement in a child process.
func coldEngine(b *testing.B, n int) *engine.Engine {
	ctx := context.Background()
	pc, err := placement.New(ctx, placement.Config{Endpoint: fakeChild(b), Token: "admin", MaxConns: 4})
	if err != nil {
		b.Fatal(err)
	}
	src := &source{nodes: scaleFleet(n), gone: map[string]bool{}}
	pol := engine.Policy{OwnerTrait: engine.OwnerTrait("bench"), MarkerTraits: []string{"COMPUTE_NODE"}}
	eng := engine.New(src, pc, pol, engine.Options{Concurrency: 4}, nil, nil)
	if r := eng.Cycle(ctx); len(r.Errors) > 0 || r.Created != n {
		b.Fatalf("cold cycle: created %d, %v", r.Created, r.ErrorMessages())
	}
	return eng
}

// idleCycle runs one idle cycle and returns the engine's CPU in it.
func idleCycle(ctx context.Context, b *testing.B, eng *engine.Engine, n int) time.Duration {
	t := cpuTime()
	var r engine.Report
	// Labelled, so a -cpuprofile can leave the cold cycle out:
	// go tool pprof -tagfocus phase=idle.
	pprof.Do(ctx, pprof.Labels("phase", "idle"), func(ctx context.Context) { r = eng.Cycle(ctx) })
	cpu := cpuTime() - t
	if r.PlacementRequests != 1 || r.Unchanged != n {
		b.Fatalf("idle cycle: %d requests, %d unchanged", r.PlacementRequests, r.Unchanged)
	}
	return cpu
}

// BenchmarkDesiredState100k is the desired state of 100,000 nodes in a
// source's (random) uuid order: the pure part of every cycle.
//
//	go test -run '^$' -bench DesiredState100k -count 3 ./engine
func BenchmarkDesiredState100k(b *testing.B) {
	nodes := scaleFleet(100_000)
	pol := engine.Policy{OwnerTrait: engine.OwnerTrait("bench"), MarkerTraits: []string{"COMPUTE_NODE"}}
	b.ReportAllocs()
	for b.Loop() {
		if d, p := engine.DesiredState(nodes, nil, pol); len(d) != len(nodes) || len(p) != 0 {
			b.Fatalf("%d desired, %d problems", len(d), len(p))
		}
	}
}
