package wasmhost_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

func fileDigest(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// plugin.sha256 pins the module: the right digest loads (and is what
// Info reports), any other content is refused in either isolation, with
// the file and both digests named.
func TestPinnedDigest(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fake.wasm")
	b, err := os.ReadFile(fakeWasm(t))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, b, 0o644)
	want := fileDigest(t, path)
	other := fileDigest(t, minimalWasm(t))
	for _, iso := range isolations {
		t.Run(iso.String(), func(t *testing.T) {
			p := mustLoad(t, path, map[string]any{"nodes": 1}, wasmhost.Options{Isolation: iso, SHA256: strings.ToUpper(want)})
			if p.Info().SHA256 != want {
				t.Fatalf("info sha256 %q, want %q", p.Info().SHA256, want)
			}
			_, err := load(t, path, map[string]any{"nodes": 1}, wasmhost.Options{Isolation: iso, SHA256: other})
			if !wasmhost.IsKind(err, wasmhost.KindRefused) || !strings.Contains(err.Error(), path) ||
				!strings.Contains(err.Error(), "sha256 is "+want+", not "+other+" as plugin.sha256 pins") {
				t.Fatalf("%v", err)
			}
			info, err := wasmhost.Inspect(context.Background(), path, wasmhost.Options{Isolation: iso})
			if err != nil || info.SHA256 != want {
				t.Fatalf("inspect: %v %q", err, info.SHA256)
			}
		})
	}
}

// The plugin host process checks the pin on every start: a file replaced
// while the plugin ran is refused when the process is restarted after a
// call overran its time limit.
func TestPinnedDigestHoldsAcrossPluginHostRestarts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hostile.wasm")
	b, err := os.ReadFile(hostileWasm(t))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, b, 0o644)
	p := mustLoad(t, path, map[string]any{"attack": "spin", "in": "list_instances"},
		wasmhost.Options{Isolation: wasmhost.ChildProcess, SHA256: fileDigest(t, path), CallTimeout: time.Second})
	if _, err := p.ListInstances(context.Background()); !wasmhost.IsKind(err, wasmhost.KindTimeout) {
		t.Fatalf("want a timeout that kills the plugin host: %v", err)
	}
	other, _ := os.ReadFile(fakeWasm(t))
	os.WriteFile(path, other, 0o644)
	_, err = p.ListNodes(context.Background(), hostabi.ListNodesRequest{})
	if !wasmhost.IsKind(err, wasmhost.KindRefused) || !strings.Contains(err.Error(), "as plugin.sha256 pins: refused") {
		t.Fatalf("after the restart with another file: %v", err)
	}
}
