package main

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/rpengine/rpengine/engine"
)

// Spellings of one endpoint give one key; other endpoints do not.
func TestPlacementKeyIgnoresSpelling(t *testing.T) {
	same := []string{"http://10.0.0.5:8778", "HTTP://10.0.0.5:8778/", "http://10.0.0.5:8778//", " http://10.0.0.5:8778/?x=1#f"}
	for _, s := range same {
		if got := placementKey(s); got != "http://10.0.0.5:8778" {
			t.Errorf("placementKey(%q) = %q", s, got)
		}
	}
	pairs := [][2]string{
		{"https://Placement.Example:443/placement/", "https://placement.example/placement"},
		{"http://[::1]:80/", "http://[::1]"},
		{"http://p/a/../placement", "http://p/placement"},
	}
	for _, p := range pairs {
		if got := placementKey(p[0]); got != p[1] {
			t.Errorf("placementKey(%q) = %q, want %q", p[0], got, p[1])
		}
	}
	for _, other := range []string{"http://10.0.0.6:8778", "http://10.0.0.5:8779", "https://10.0.0.5:8778", "http://10.0.0.5:8778/other"} {
		if placementKey(other) == "http://10.0.0.5:8778" {
			t.Errorf("%q taken for the same Placement", other)
		}
	}
}

// A default state file named after the endpoint as an older version
// spelt it is renamed and read, record and all; a file of another
// Placement is not.
func TestLegacyStateFileIsAdopted(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("STATE_DIRECTORY", dir)
	spelt := "http://10.0.0.5:8778/"
	legacy := defaultStateFile("e1", spelt)
	body := `{"version":1,"key":"` + spelt + ` e1","round":3,"providers":{"u":{"Managed":{"Traits":["CUSTOM_GPU"]}}}}`
	if err := os.WriteFile(legacy, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	path := statePath("", "e1", spelt)
	if path == legacy || filepath.Dir(path) != dir {
		t.Fatalf("paths %s, %s", path, legacy)
	}
	adoptLegacyState(path, legacy, slog.New(slog.DiscardHandler))
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("not renamed: %v", err)
	}
	st, err := engine.LoadState(path, placementKey(spelt)+" e1", spelt+" e1")
	if r, ok := st.Record("u"); err != nil || !ok || len(r.Managed.Traits) != 1 {
		t.Fatalf("renamed file: %v, record %+v", err, r)
	}
	copyPath := filepath.Join(t.TempDir(), "copy.json")
	if err := os.WriteFile(copyPath, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	other, err := engine.LoadState(copyPath, "http://10.0.0.6:8778 e1", "http://10.0.0.6:8778/ e1")
	if _, ok := other.Record("u"); ok || err == nil || errors.Is(err, engine.ErrStateUnusable) {
		t.Fatalf("another Placement's engine read the record (err %v)", err)
	}
}
