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
