package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/guesttest"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// A module that breaks the ABI is refused at load, with an error that
// names the file and the broken part.
func TestBrokenModulesAreRefusedAtLoad(t *testing.T) {
	garbage := filepath.Join(t.TempDir(), "garbage.wasm")
	os.WriteFile(garbage, []byte("\x00asm\x01\x00\x00\x00garbage"), 0o644)
	cases := []struct {
		name string
		wasm func(t *testing.T) string
		opts wasmhost.Options
		kind wasmhost.Kind
		want string
	}{
		{"wrong ABI version", raw("abi2"), wasmhost.Options{}, wasmhost.KindRefused,
			"plugin speaks ABI version 2, this engine speaks version 1"},
		{"wrong export signature", raw("badsig"), wasmhost.Options{}, wasmhost.KindRefused,
			`export "rpengine_list_nodes" has signature (i32) -> (i32), want (i32, i32) -> (i64)`},
		{"missing export", raw("noexport"), wasmhost.Options{}, wasmhost.KindRefused,
			`missing export "rpengine_list_instances"`},
		{"unknown host function", raw("badimport"), wasmhost.Options{}, wasmhost.KindRefused,
			"imports rpengine.launch_missiles, which this host does not provide (ABI v1)"},
		{"not a module", func(*testing.T) string { return garbage }, wasmhost.Options{}, wasmhost.KindRefused,
			"not a valid Wasm module"},
		{"memory below the module's minimum", raw(), wasmhost.Options{MemoryLimit: 1 << 20}, wasmhost.KindRefused,
			"needs more memory than the limit of 1 MiB"},
		{"no such file", func(t *testing.T) string { return filepath.Join(t.TempDir(), "gone.wasm") }, wasmhost.Options{},
			wasmhost.KindHost, "no such file or directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wasm := c.wasm(t)
			_, err := guesttest.WasmLoader(wasm, c.opts)(t, nil)
			var e *wasmhost.Error
			if !errors.As(err, &e) || e.Kind != c.kind || e.Plugin != wasm || !strings.Contains(e.Msg, c.want) {
				t.Fatalf("err = %v, want a %s error naming %s and %q", err, c.kind, wasm, c.want)
			}
		})
	}
}

// Answers that break the ABI are rejected, never used in part.
func TestBrokenAnswersAreRejected(t *testing.T) {
	load := guesttest.WasmLoader(raw()(t), wasmhost.Options{})
	for _, c := range []struct{ mode, want string }{
		{"malformed", "malformed answer"},
		{"outside", "answer at 0xfff00000+4096 lies outside guest memory"},
		{"incomplete", "answered without complete=true"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			p := load.OK(t, c.mode)
			nodes, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{})
			if nodes != nil || !wasmhost.IsKind(err, wasmhost.KindBadAnswer) ||
				!strings.Contains(err.Error(), "plugin raw: list_nodes: "+c.want) {
				t.Fatalf("nodes %v, err = %v, want a bad answer: %q", nodes, err, c.want)
			}
		})
	}
	t.Run("confirm_deleted about uuids not asked", func(t *testing.T) {
		p := load.OK(t, "lies")
		deleted, present, err := p.ConfirmDeleted(context.Background(), []string{"00000000-0000-4000-8000-000000000001"})
		if deleted != nil || present != nil || !wasmhost.IsKind(err, wasmhost.KindBadAnswer) ||
			!strings.Contains(err.Error(), "which was not asked") {
			t.Fatalf("deleted %v present %v err = %v", deleted, present, err)
		}
	})
}

// raw builds the ABI-breaking plugin with the given build tags.
func raw(tags ...string) func(t *testing.T) string {
	return func(t *testing.T) string { return guesttest.Build(t, "raw", tags...) }
}
