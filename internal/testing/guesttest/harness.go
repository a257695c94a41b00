package guesttest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/rpengine/rpengine/hostabi/guest"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// Loader starts the plugin under test with config (marshalled to JSON;
// nil means {}) and returns it, or the load error (a bad config, say). The
// plugin is closed when the test ends.
type Loader func(tb testing.TB, config any) (*wasmhost.Plugin, error)

// OK is like calling l, but fails the test on error.
func (l Loader) OK(tb testing.TB, config any) *wasmhost.Plugin {
	tb.Helper()
	p, err := l(tb, config)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// Run runs test as two subtests: "native", where the plugin made by
// newPlugin runs in the test process through Native, and "wasm",
// where the package in dir is built for wasip1 and loaded by
// wasmhost.Load with opts (CacheDir defaults to CacheDir()). In both,
// guest.HTTP reaches opts.Services through the host's gate.
//
// The native run has no sandbox and no limits, and shares guest.HTTP with
// the whole process: do not run native subtests in parallel.
func Run(t *testing.T, dir string, newPlugin func() guest.Plugin, opts wasmhost.Options, test func(t *testing.T, load Loader)) {
	t.Run("native", func(t *testing.T) { test(t, NativeLoader(newPlugin, opts)) })
	t.Run("wasm", func(t *testing.T) { test(t, WasmLoader(Build(t, dir), opts)) })
}

// NativeLoader loads a fresh plugin from newPlugin with Native.
func NativeLoader(newPlugin func() guest.Plugin, opts wasmhost.Options) Loader {
	return func(tb testing.TB, config any) (*wasmhost.Plugin, error) {
		tb.Helper()
		p, err := Native(context.Background(), newPlugin(), marshal(tb, config), opts)
		if p != nil {
			tb.Cleanup(func() { p.Close(context.Background()) })
		}
		return p, err
	}
}

// WasmLoader loads the module at wasm with wasmhost.Load.
func WasmLoader(wasm string, opts wasmhost.Options) Loader {
	if opts.CacheDir == "" {
		opts.CacheDir = CacheDir()
	}
	return func(tb testing.TB, config any) (*wasmhost.Plugin, error) {
		tb.Helper()
		p, err := wasmhost.Load(context.Background(), wasm, marshal(tb, config), opts)
		if p != nil {
			tb.Cleanup(func() { p.Close(context.Background()) })
		}
		return p, err
	}
}

func marshal(tb testing.TB, config any) []byte {
	tb.Helper()
	if config == nil {
		return []byte("{}")
	}
	if raw, ok := config.([]byte); ok {
		return raw
	}
	raw, err := json.Marshal(config)
	if err != nil {
		tb.Fatalf("plugin config: %v", err)
	}
	return raw
}
