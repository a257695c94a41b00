package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/guesttest"
)

// plugin compile fills the cache the engine starts from: after it, the
// cache holds the compiled module, and a bad file is named.
func TestPluginCompileFillsTheCache(t *testing.T) {
	wasm := guesttest.Build(t, "../../plugins/fake")
	dir := filepath.Join(t.TempDir(), "wazero")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"plugin", "compile", "--cache-dir", dir, wasm}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "fake 1 compiled into "+dir) {
		t.Fatalf("output %q", out.String())
	}
	var files int
	filepath.Walk(dir, func(_ string, fi os.FileInfo, _ error) error {
		if fi != nil && fi.Mode().IsRegular() && fi.Size() > 0 {
			files++
		}
		return nil
	})
	if files == 0 {
		t.Fatal("nothing compiled into the cache")
	}
	bad := filepath.Join(t.TempDir(), "bad.wasm")
	os.WriteFile(bad, []byte("not wasm"), 0o644)
	if code := run(context.Background(), []string{"plugin", "compile", "--cache-dir", dir, bad}, &out, &errb); code == 0 ||
		!strings.Contains(errb.String(), "bad.wasm") {
		t.Fatalf("bad module: exit %d, %s", code, errb.String())
	}
}

// With --config, only the plugin and the cache are read: the config as
// the package installs it, before its credentials are in place, still
// compiles its plugin into its cache_dir.
func TestPluginCompileReadsOnlyThePluginKeys(t *testing.T) {
	wasm := guesttest.Build(t, "../../plugins/fake")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "engine.toml")
	writeFile(t, cfg, `[auth]
method = "cloud"
clouds_file = "clouds.yaml"
cloud = "missing"

[placement]
endpoint = "http://127.0.0.1:1"

[plugin]
path = "`+wasm+`"
cache_dir = "cache"
`)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"plugin", "compile", "--config", cfg}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if want := "compiled into " + filepath.Join(dir, "cache"); !strings.Contains(out.String(), want) {
		t.Fatalf("output %q, want %q", out.String(), want)
	}
	writeFile(t, cfg, "[engine]\nid = \"a\"\n")
	if code := run(context.Background(), []string{"plugin", "compile", "--config", cfg}, &out, &errb); code != 2 ||
		!strings.Contains(errb.String(), "plugin.path is empty") {
		t.Fatalf("no plugin: exit %d, %s", code, errb.String())
	}
}
