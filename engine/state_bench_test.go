package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/rpengine/rpengine/engine/placement"
)

// benchStateFile is a state file of n providers as the engine writes it
// after a cold start: each with its own generation, the rest alike.
func benchStateFile(b *testing.B, n int) []byte {
	f := stateFile{Version: stateVersion, Key: "bench", Round: 42, Providers: map[string]known{}}
	for i := range n {
		f.Providers[fmt.Sprintf("00000000-0000-4000-8000-%012d", i)] = known{
			Observed: Observed{Exists: true, Generation: placement.Generation(fmt.Sprint(1e9 + i)),
				Inventory: map[string]placement.Inventory{"CUSTOM_BAREMETAL_GOLD": {Total: 1, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1}},
				Traits:    []string{"COMPUTE_NODE", "CUSTOM_RPENGINE_OWNER_BENCH", "CUSTOM_RACK_A"}},
			Record: Record{Managed: Managed{Traits: []string{"COMPUTE_NODE", "CUSTOM_RPENGINE_OWNER_BENCH"}}, Plugin: "fake"},
		}
	}
	body, err := json.Marshal(f)
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// BenchmarkReadStateFile compares reading a state file (what every
// restart does before its first cycle) with the streaming reader LoadState
// uses (stream), json v2's Unmarshal and encoding/json, at 10,000 and
// 100,000 providers. heap-MB is the live heap the decoded state holds.
//
//	go test -run '^$' -bench ReadStateFile -benchtime 3x -count 3 ./engine
func BenchmarkReadStateFile(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		body := benchStateFile(b, n)
		for _, c := range []struct {
			name   string
			decode func([]byte) (stateFile, error)
		}{
			{"stream", func(b []byte) (stateFile, error) { return readStateFile(bytes.NewReader(b)) }},
			{"json_v2", func(b []byte) (f stateFile, err error) { err = jsonv2.Unmarshal(b, &f); return }},
			{"encoding_json", func(b []byte) (f stateFile, err error) { err = json.Unmarshal(b, &f); return }},
		} {
			b.Run(fmt.Sprintf("%dk/%s", n/1000, c.name), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				var got stateFile
				for b.Loop() {
					var err error
					if got, err = c.decode(body); err != nil || len(got.Providers) != n {
						b.Fatalf("%d providers, %v", len(got.Providers), err)
					}
				}
				b.StopTimer()
				var before, after runtime.MemStats
				got = stateFile{}
				runtime.GC()
				runtime.ReadMemStats(&before)
				got, _ = c.decode(body)
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1e6, "heap-MB")
				runtime.KeepAlive(got)
			})
		}
	}
}
