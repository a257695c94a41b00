package bench

import (
	"strings"
	"testing"
)

func TestParseGoBenchAndCeilings(t *testing.T) {
	out := `goos: linux
BenchmarkListNodes10k/ratio-2   	3	  1000 ns/op	  1.40 wasm/native	 1.30 abi/native	 20 native-ms	 29 wasm-ms
BenchmarkListNodes10k/ratio-2   	3	  1100 ns/op	  1.60 wasm/native	 1.10 abi/native	 10 native-ms	 30 wasm-ms
BenchmarkListNodes10k/ratio-2   	3	  1200 ns/op	  1.45 wasm/native	 1.25 abi/native	 30 native-ms	 31 wasm-ms
ok  	github.com/rpengine/rpengine/plugins/ironic	1.0s
`
	ms, err := ParseGoBench(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 5 || ms[0].Pkg != "plugins/ironic" || ms[0].Bench != "BenchmarkListNodes10k/ratio" || ms[1].Unit != "wasm/native" || len(ms[1].Values) != 3 {
		t.Fatalf("parsed %+v", ms)
	}
	rows := PluginCeilings(ms)
	if len(rows) != 2 {
		t.Fatalf("rows %+v", rows)
	}
	if rows[0].Value != "1.40 / 1.45 / 1.60× (medians: wasm 30.0 ms, native 20.0 ms)" || rows[0].Met != "yes" || rows[0].Fleet != "plugins/ironic `BenchmarkListNodes10k/ratio`" {
		t.Errorf("wasm row %+v", rows[0])
	}
	if rows[1].Value != "1.10 / 1.25 / 1.30×" || rows[1].Met != "NO" {
		t.Errorf("abi row %+v", rows[1])
	}
}

// With an even number of rounds the median is the mean of the middle
// two, so two rounds do not report the higher as the median.
func TestSpreadOfEvenRounds(t *testing.T) {
	if s := SpreadOf([]float64{3.35, 1.01}); s.Min != 1.01 || s.Max != 3.35 || s.Med != 2.18 {
		t.Errorf("spread %+v", s)
	}
}
