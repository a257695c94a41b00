package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// engine.id names files and the owner marker: one plain word.
func TestEngineIDSyntax(t *testing.T) {
	for id, want := range map[string]string{
		"e1": "", "az-1.rack_a": "", "Rack-7": "", strings.Repeat("a", maxIDLength): "",
		"az-1.rack/a": `'/' not allowed`, "..": "must not start with a dot", ".hidden": "must not start with a dot",
		"a b": `' ' not allowed`, `a\b`: `'\\' not allowed`, "ünï": `'ü' not allowed`, "": "must not be empty",
		strings.Repeat("a", maxIDLength+1): "at most 233",
	} {
		errs := checkID(id)
		switch {
		case want == "" && len(errs) > 0:
			t.Errorf("id %q refused: %v", id, errs)
		case want != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), want)):
			t.Errorf("id %q: %v, want one error saying %s", id, errs, want)
		}
	}
}

// Check reports every problem of a config at once, each naming its key,
// and the config as far as it was read.
func TestCheckListsEveryProblem(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.toml")
	text := `
[engine]
id = "az-1.rack/a"
interval = "-5s"
concurrency = 0
[placement]
endpoint = "http://127.0.0.1:8778"
tokn = "admin"
[plugin]
path = "missing.wasm"
`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c, errs := Check(path)
	if c == nil || c.Placement.Endpoint.Raw() != "http://127.0.0.1:8778" {
		t.Fatalf("config %v: want it as far as read", c)
	}
	var all []string
	for _, e := range errs {
		all = append(all, e.Error())
	}
	got := strings.Join(all, "\n")
	for _, want := range []string{"unknown key(s): placement.tokn", `engine.id "az-1.rack/a"`, "engine.interval: must be positive",
		"engine.concurrency: must be at least 1", "plugin.path: "} {
		if !strings.Contains(got, want) {
			t.Errorf("problems do not say %q:\n%s", want, got)
		}
	}
	if len(errs) != 5 {
		t.Errorf("%d problems, want 5:\n%s", len(errs), got)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "placement.tokn") || !strings.Contains(err.Error(), "engine.concurrency") {
		t.Errorf("Load: %v; want every problem too", err)
	}
}
