package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The go.mod the verb writes is the one docs/PLUGIN-SDK.md shows.
func TestPluginNewGoModIsTheDocs(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "PLUGIN-SDK.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```go\n(module example.com/rpengine-plugin-myplugin\n.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/PLUGIN-SDK.md: no ```go block starting with the myplugin module line")
	}
	dir := filepath.Join(t.TempDir(), "myplugin")
	if err := cmdPluginNew([]string{"myplugin", dir}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(m[1]) {
		t.Fatalf("engine plugin new wrote go.mod\n%s\ndocs/PLUGIN-SDK.md shows\n%s", got, m[1])
	}
}

// The verb writes the plugin and the SDK's source without its tests, and
// the SDK copy is a module of its own.
func TestPluginNewWritesPluginAndSDK(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	var out bytes.Buffer
	if err := cmdPluginNew([]string{"acme-nodes", dir}, &out); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"main.go", "README.md", "sdk/hostabi/go.mod", "sdk/hostabi/abi.go",
		"sdk/hostabi/guest/plugin.go", "sdk/hostabi/projection/decode.go", "sdk/hostabi/ABI.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	main, _ := os.ReadFile(filepath.Join(dir, "main.go"))
	if !strings.Contains(string(main), `return "acme-nodes", version`) {
		t.Errorf("main.go does not describe the plugin as acme-nodes:\n%s", main)
	}
	tests, _ := filepath.Glob(filepath.Join(dir, "sdk", "hostabi", "*", "*_test.go"))
	top, _ := filepath.Glob(filepath.Join(dir, "sdk", "hostabi", "*_test.go"))
	if len(tests)+len(top) > 0 {
		t.Errorf("test files copied into the SDK: %v %v", tests, top)
	}
	if !strings.Contains(out.String(), "GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o acme-nodes.wasm .") {
		t.Errorf("no build command in the output:\n%s", out.String())
	}
}

func TestPluginNewRefuses(t *testing.T) {
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "x"), nil, 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{}, "engine plugin new NAME [DIR]"},
		{[]string{"Bad_Name", t.TempDir()}, `plugin name "Bad_Name"`},
		{[]string{"ok", full}, "exists and is not empty"},
	} {
		err := cmdPluginNew(c.args, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("plugin new %q: err %v, want one naming %q", c.args, err, c.want)
		}
		if len(c.args) < 2 && !errors.Is(err, errUsage) {
			t.Errorf("plugin new %q: not a usage error: %v", c.args, err)
		}
	}
}
