package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/bench"
)

// A NO row links its profile relative to the report, says "not written
// yet" when the profile is missing, and a met goal is left alone.
func TestExplainLinksProfiles(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "engine"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "engine", "PROFILE-100k.md"), []byte("#\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows := []bench.Stamped{
		{Row: bench.Row{Metric: "engine CPU per idle cycle, plugin excluded, ms", Fleet: "100000 (fake)", Met: "NO"}},
		{Row: bench.Row{Metric: "whole plugin call in Wasm / same code native", Fleet: "plugins/vmware `BenchmarkList100x20`", Met: "NO"}},
		{Row: bench.Row{Metric: "Placement requests per idle cycle", Fleet: "100000 (fake)", Met: "yes"}},
	}
	explain(rows, root, filepath.Join(root, "reports"))
	if rows[0].Met != "NO (why: [engine/PROFILE-100k.md](../engine/PROFILE-100k.md))" {
		t.Errorf("idle CPU row: %q", rows[0].Met)
	}
	if rows[1].Met != "NO (plugins/vmware/PROFILE.md: not written yet)" {
		t.Errorf("vmware row: %q", rows[1].Met)
	}
	if rows[2].Met != "yes" {
		t.Errorf("met row: %q", rows[2].Met)
	}
}

// The summary repeats the 100k ceilings in its own order, each row once.
func TestSummaryPicksTheCeilings(t *testing.T) {
	rows := []bench.Stamped{
		{Row: bench.Row{Metric: "engine CPU per idle cycle, plugin excluded, ms", Fleet: "10000 (fake)"}},
		{Row: bench.Row{Metric: "first start of the plugin after an install", Fleet: "vmware.wasm"}},
		{Row: bench.Row{Metric: "engine CPU per idle cycle, plugin excluded, ms", Fleet: "100000 (fake)"}},
	}
	s := summary(rows)
	if len(s) != 2 || !strings.HasPrefix(s[0].Fleet, "100000") || s[1].Fleet != "vmware.wasm" {
		t.Errorf("summary %+v", s)
	}
}

// A row's command switches off every part but its own.
func TestRerun(t *testing.T) {
	for flags, want := range map[string]string{
		"-sizes 10000":              "go run ./cmd/rpbench -out /tmp/b.md -real 0 -prod 0 -curve-nodes 0 -first-start=false -sizes 10000",
		"-first-start=true":         "go run ./cmd/rpbench -out /tmp/b.md -sizes '' -real 0 -prod 0 -curve-nodes 0 -first-start=true",
		"-real 1000 -real-rounds 2": "go run ./cmd/rpbench -out /tmp/b.md -sizes '' -prod 0 -curve-nodes 0 -first-start=false -real 1000 -real-rounds 2",
	} {
		if got := rerun(flags); got != want {
			t.Errorf("%s:\n got %s\nwant %s", flags, got, want)
		}
	}
}
