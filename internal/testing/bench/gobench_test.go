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
	if rows[0].Value != "1.40 / 1.45 / 1.60× (medians: wasm 30.0 ms, native 20.0 ms)" || rows[0].Met != "yes" || rows[0].Goal != "≤ 1.5×" || rows[0].Fleet != "plugins/ironic `BenchmarkListNodes10k/ratio`" {
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

// The VMware benchmark's wasm and native sub-benchmarks make its ratio,
// against its own goal (2×); the fake plugin's rows carry no goal; a
// benchmark that reported nothing (vcsim missing) is a NO row.
func TestPluginCeilingsFromSubBenchmarks(t *testing.T) {
	out := `BenchmarkList100x20/wasm-2     3   300000000 ns/op
BenchmarkList100x20/native-2   3   100000000 ns/op
ok  	github.com/rpengine/rpengine/plugins/vmware	99s
BenchmarkDecode10k/project/wasm-2     3   300000000 ns/op
BenchmarkDecode10k/project/native-2   3   100000000 ns/op
ok  	github.com/rpengine/rpengine/plugins/ironic	99s
BenchmarkList10k-2   3   1000 ns/op	  50.0 wasm/native	 20 abi/native
ok  	github.com/rpengine/rpengine/plugins/fake	1.0s
`
	ms, err := ParseGoBench(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	rows := PluginCeilings(ms)
	if len(rows) != 3 {
		t.Fatalf("rows %+v", rows)
	}
	vm := rows[2]
	if vm.Fleet != "plugins/vmware `BenchmarkList100x20`" || vm.Value != "3.00×" || vm.Goal != "≤ 2.0×" || vm.Met != "NO" {
		t.Errorf("vmware row %+v", vm)
	}
	if rows[0].Met != "" || rows[1].Met != "" {
		t.Errorf("fake rows have a verdict: %+v", rows[:2])
	}
	missing := MissingRows(ms)
	if len(missing) != len(Expected)-1 || !strings.Contains(missing[0].Metric, "Ironic plugin") || !strings.Contains(missing[1].Metric, "Ironic requests") || missing[0].Met != "NO" {
		t.Errorf("missing rows %+v", missing)
	}
}

// A package whose benchmarks failed names its metrics by its FAIL line,
// not the next package's ok line.
func TestParseGoBenchFailedPackage(t *testing.T) {
	out := `BenchmarkA-2   3   10 ns/op
FAIL	github.com/rpengine/rpengine/plugins/vmware	9s
BenchmarkB-2   3   10 ns/op
ok  	github.com/rpengine/rpengine/plugins/fake	1s
`
	ms, err := ParseGoBench(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Pkg != "plugins/vmware" || ms[1].Pkg != "plugins/fake" {
		t.Errorf("parsed %+v", ms)
	}
}

// A CPU ratio ("-cpu") is a row against the same ceiling, with the CPU
// medians beside it.
func TestPluginCeilingsOnCPU(t *testing.T) {
	out := `BenchmarkList100x20-2   1   0 ns/op	 2.5 wasm/native	 1.8 wasm/native-cpu	 90 wasm-cpu-ms	 50 native-cpu-ms
ok  	github.com/rpengine/rpengine/plugins/vmware	99s
`
	ms, err := ParseGoBench(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	rows := PluginCeilings(ms)
	if len(rows) != 2 || rows[0].Met != "NO" || rows[1].Met != "yes" || rows[1].Goal != "≤ 2.0×" ||
		rows[1].Value != "1.80× (medians: wasm 90.0 ms, native 50.0 ms)" || !strings.Contains(rows[1].Metric, "CPU") {
		t.Errorf("rows %+v", rows)
	}
	if m := MissingRows(ms); len(m) != len(Expected)-1 {
		t.Errorf("missing %+v", m)
	}
}

// The idle listing's rows pair each run's listing with its minimal job.
func TestListingRows(t *testing.T) {
	out := "# run 2026-12-04 23:40, load 5.21: go test ./engine/placement\n" +
		"BenchmarkIdleListing/listing_10k-2 3 15000000 ns/op\nBenchmarkIdleListing/minimal_10k-2 3 10000000 ns/op\n" +
		"BenchmarkIdleListing/listing_10k-2 3 12000000 ns/op\nBenchmarkIdleListing/minimal_10k-2 3 10000000 ns/op\n" +
		"ok github.com/rpengine/rpengine/engine/placement 3.0s\n"
	ms, err := ParseGoBench(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	rows := ListingRows(ms)
	if len(rows) != 1 || rows[0].Met != "NO" || !strings.HasPrefix(rows[0].Value, "1.20 / 1.35 / 1.50×") ||
		rows[0].At != "2026-12-04 23:40, load 5.21" || rows[0].Command != "go test ./engine/placement" {
		t.Fatalf("%+v", rows)
	}
}

func TestDecodeFloorRow(t *testing.T) {
	out := "BenchmarkDecodeProviders/generations_100k-2 5 96388840 ns/op 94.6 cpu-ms/op\n" +
		"BenchmarkDecodeProviders/floor_100k-2 5 37604560 ns/op 34.6 cpu-ms/op\nok github.com/rpengine/rpengine/engine/placement 3.0s\n"
	ms, _ := ParseGoBench(strings.NewReader(out))
	rows := DecodeFloorRow(ms)
	if len(rows) != 1 || !strings.HasPrefix(rows[0].Value, "2.73×") {
		t.Fatalf("%+v", rows)
	}
}

// The node sync's metric is a row against 5 ms, stamped with its run; a
// run over it is NO.
func TestNodeSyncRows(t *testing.T) {
	row := func(values ...string) []Stamped {
		out := "# run 2026-12-05 18:20, load 15.2: go test ./engine/\n"
		for _, v := range values {
			out += "BenchmarkNodeSync100k-2   30   2177865 ns/op   " + v + " cpu-ms/sync\n"
		}
		ms, err := ParseGoBench(strings.NewReader(out + "ok  \tgithub.com/rpengine/rpengine/engine\t80s\n"))
		if err != nil {
			t.Fatal(err)
		}
		if len(MissingRows(ms)) != len(Expected)-1 {
			t.Errorf("the node sync's row counted as missing: %+v", MissingRows(ms))
		}
		return NodeSyncRows(ms)
	}
	met := row("0.85", "0.91", "1.10")
	if len(met) != 1 || met[0].Met != "yes" || met[0].Goal != "≤ 5 ms" || met[0].Fleet != "engine `BenchmarkNodeSync100k`" ||
		met[0].Value != "0.85 / 0.91 / 1.10 ms" || met[0].At != "2026-12-05 18:20, load 15.2" {
		t.Fatalf("rows %+v", met)
	}
	if rows := row("0.85", "409.1"); rows[0].Met != "NO" {
		t.Fatalf("a sync of 409 ms: %+v", rows)
	}
}

func TestPlanReadsAndWarmStartRows(t *testing.T) {
	rows := func(out string) []Stamped {
		ms, err := ParseGoBench(strings.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		return append(PlanReadsRows(ms), WarmStartRows(ms)...)
	}
	got := rows("# run 2026-12-05 21:30, load 1.2: go test ./engine/\n" +
		"BenchmarkPlanReads1k-2   1   527853403 ns/op   1.000 cycle-reads   2.000 plan-reads\n" +
		"ok  \tgithub.com/rpengine/rpengine/engine\t1s\n" +
		"BenchmarkWarmCompileVMware-2   5   1 ns/op   310.0 compile-cpu-ms/start   27.00 trusted-cpu-ms/start\n" +
		"ok  \tgithub.com/rpengine/rpengine/internal/wasmhost\t9s\n")
	if len(got) != 2 || !strings.HasPrefix(got[0].Met, "NO by 1") || got[0].Value != "2 (the cycle it predicts: 1)" ||
		got[0].At != "2026-12-05 21:30, load 1.2" || !strings.HasPrefix(got[1].Met, "NO: wazero") ||
		got[1].Value != "310 (trusting the cache: 27; 11.5×)" {
		t.Fatalf("rows %+v", got)
	}
	got = rows("BenchmarkPlanReads1k-2   1   5 ns/op   1.000 cycle-reads   1.000 plan-reads\n" +
		"ok  \tgithub.com/rpengine/rpengine/engine\t1s\n" +
		"BenchmarkWarmCompileVMware-2   5   1 ns/op   40.0 compile-cpu-ms/start   27.00 trusted-cpu-ms/start\n" +
		"ok  \tgithub.com/rpengine/rpengine/internal/wasmhost\t9s\n")
	if len(got) != 2 || got[0].Met != "yes" || got[1].Met != "yes" {
		t.Fatalf("rows at the goals %+v", got)
	}
}
