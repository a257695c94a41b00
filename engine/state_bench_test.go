package engine

import (
	"encoding/json"
	"fmt"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/rpengine/rpengine/engine/placement"
)

// BenchmarkReadStateFile compares reading a 10,000-provider state file
// (what every restart does before its first cycle) with json v2, as
// LoadState does, and with encoding/json.
func BenchmarkReadStateFile(b *testing.B) {
	f := stateFile{Version: stateVersion, Key: "bench", Round: 42, Providers: map[string]known{}}
	for i := range 10_000 {
		f.Providers[fmt.Sprintf("00000000-0000-4000-8000-%012d", i)] = known{
			Observed: Observed{Exists: true, Generation: placement.Generation(fmt.Sprint(1e9 + i)),
				Inventory: map[string]placement.Inventory{"CUSTOM_BAREMETAL_GOLD": {Total: 1, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1}},
				Traits:    []string{"COMPUTE_NODE", "CUSTOM_RPENGINE_OWNER_BENCH", "CUSTOM_RACK_A"}},
			Managed: Managed{Traits: []string{"COMPUTE_NODE", "CUSTOM_RPENGINE_OWNER_BENCH"}},
		}
	}
	body, err := json.Marshal(f)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		unmarshal func([]byte, any) error
	}{{"json_v2", func(b []byte, v any) error { return jsonv2.Unmarshal(b, v) }}, {"encoding_json", json.Unmarshal}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var got stateFile
				if err := c.unmarshal(body, &got); err != nil || len(got.Providers) != 10_000 {
					b.Fatalf("%d providers, %v", len(got.Providers), err)
				}
			}
		})
	}
}
