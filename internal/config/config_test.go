package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const good = `
[engine]
id = "e1"
interval = "30s"
[placement]
endpoint = "http://127.0.0.1:8778"
token = "admin"
[plugin]
path = "fake.wasm"
memory_limit = "128MiB"
[plugin.config]
nodes = 5
seed = 1
`

func dirWithPlugin(t *testing.T) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "fake.wasm"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestGoodConfig(t *testing.T) {
	dir := dirWithPlugin(t)
	c, err := Parse(good, dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Engine.Interval.D() != 30*time.Second || c.Plugin.MemoryLimit != 128<<20 {
		t.Fatalf("interval %v memory %d", c.Engine.Interval.D(), c.Plugin.MemoryLimit)
	}
	if c.Plugin.Path != filepath.Join(dir, "fake.wasm") {
		t.Fatalf("plugin path %q not resolved against the config dir", c.Plugin.Path)
	}
	pc, _ := c.PluginConfig()
	if string(pc) != `{"nodes":5,"seed":1}` {
		t.Fatalf("plugin config %s", pc)
	}
}

func TestBadConfigNamesTheProblem(t *testing.T) {
	cases := []struct{ name, edit, want string }{
		{"unknown key", `token = "admin"`, "unknown key(s): placement.tokn"},
		{"bad duration", `interval = "30s"`, "key engine.interval: bad duration"},
		{"bad size", `memory_limit = "128MiB"`, "bad size"},
		{"missing plugin", `path = "fake.wasm"`, "plugin.path"},
		{"plugin is a directory", `path = "fake.wasm"`, "plugin.path is a directory"},
		{"wrong type", `id = "e1"`, "engine.id"},
		{"bad number", `nodes = 5`, "plugin.config"},
		{"syntax", `[engine]`, "line"},
	}
	repl := map[string]string{
		"unknown key":           `tokn = "admin"`,
		"bad duration":          `interval = "30 seconds"`,
		"bad size":              `memory_limit = "lots"`,
		"missing plugin":        `path = "nope.wasm"`,
		"plugin is a directory": `path = "."`,
		"wrong type":            `id = 7`,
		"syntax":                `[engine`,
		"bad number":            `nodes = 5x`,
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := strings.Replace(good, c.edit, repl[c.name], 1)
			_, err := Parse(text, dirWithPlugin(t))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// FuzzParse: any text either parses into a config that passed its checks
// or is refused with an error; it never panics.
func FuzzParse(f *testing.F) {
	f.Add(good)
	f.Add("[engine]\ninterval = \"1x\"\n")
	f.Add("[plugin.config]\nnodes = [1, {a = 2}]\n")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, text string) {
		c, err := Parse(text, dir)
		if err == nil && (c.Engine.Interval <= 0 || c.Placement.Endpoint.IsZero() || c.Plugin.Path == "") {
			t.Fatalf("accepted an incomplete config: %+v", c)
		}
	})
}

// Every bad value is named in one run, not only the first the decoder
// met, with the other keys' problems beside them; a mistyped key gets the
// nearest real one.
func TestAllValueErrorsInOneRun(t *testing.T) {
	text := `[engine]
interval = "5 seconds"
concurrency = "four"
delete_limit = 3.0
intervall = "5s"

[plugin]
path = "x.wasm"
memory_limit = "lots"
`
	_, err := Parse(text, t.TempDir())
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{
		`line 2, key engine.interval: bad duration "5 seconds"`,
		"line 3, key engine.concurrency: incompatible types",
		`line 9, key plugin.memory_limit: bad size "lots"`,
		"engine.delete_limit: must be in (0, 1]",
		"engine.intervall (did you mean engine.interval?)",
		"placement.endpoint: is required",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the errors lack %q:\n%s", want, msg)
		}
	}
	if _, err := Parse("[engine\ninterval = 1", t.TempDir()); err == nil || !strings.Contains(err.Error(), "line 2: expected") {
		t.Errorf("a syntax error: %v", err)
	}
}
