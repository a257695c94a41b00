package wasmhost

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/rpengine/rpengine/hostabi"
)

// required lists each mandatory export with its wasm signature.
var required = map[string]struct{ params, results []api.ValueType }{
	hostabi.ExportInitialize:    {nil, nil},
	hostabi.ExportABIVersion:    {nil, []api.ValueType{api.ValueTypeI32}},
	hostabi.ExportAlloc:         {[]api.ValueType{api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}},
	hostabi.ExportFree:          {[]api.ValueType{api.ValueTypeI32}, nil},
	hostabi.ExportConfigure:     {i32x2, i64},
	hostabi.ExportListNodes:     {i32x2, i64},
	hostabi.ExportListInstances: {i32x2, i64},
}

var (
	i32x2 = []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}
	i64   = []api.ValueType{api.ValueTypeI64}
)

// Load compiles the plugin at path, checks its exports and ABI version,
// instantiates it and passes it config (the [plugin.config] table as JSON).
func Load(ctx context.Context, path string, config []byte, opts Options) (*Plugin, error) {
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", path, err)
	}
	opts = opts.withDefaults()
	rc := wazero.NewRuntimeConfigCompiler().
		WithMemoryLimitPages(uint32(opts.MemoryLimit / pageSize)).
		WithCloseOnContextDone(true)
	if opts.CacheDir != "" {
		cache, err := wazero.NewCompilationCacheWithDir(opts.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("plugin cache dir %s: %w", opts.CacheDir, err)
		}
		rc = rc.WithCompilationCache(cache)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	p := &Plugin{path: path, rt: rt, opts: opts, config: config}
	if err := p.setup(ctx, wasm); err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("plugin %s: %w", path, err)
	}
	return p, nil
}

func (p *Plugin) setup(ctx context.Context, wasm []byte) error {
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, p.rt); err != nil {
		return fmt.Errorf("wasi: %w", err)
	}
	if err := p.hostFunctions(ctx); err != nil {
		return err
	}
	compiled, err := p.rt.CompileModule(ctx, wasm)
	if err != nil {
		return fmt.Errorf("compile: %w", err)
	}
	if err := checkExports(compiled); err != nil {
		return err
	}
	p.compiled = compiled
	return p.instantiate(ctx)
}

// checkExports refuses a module that lacks an export or declares one with
// the wrong signature, naming the export.
func checkExports(cm wazero.CompiledModule) error {
	have := cm.ExportedFunctions()
	for name, want := range required {
		def, ok := have[name]
		if !ok {
			return fmt.Errorf("missing export %q (is it built with the hostabi/guest SDK and -buildmode=c-shared?)", name)
		}
		if !sameTypes(def.ParamTypes(), want.params) || !sameTypes(def.ResultTypes(), want.results) {
			return fmt.Errorf("export %q has signature %v -> %v, want %v -> %v",
				name, def.ParamTypes(), def.ResultTypes(), want.params, want.results)
		}
	}
	if _, ok := cm.ExportedMemories()["memory"]; !ok {
		return fmt.Errorf("missing exported memory")
	}
	return nil
}

func sameTypes(a, b []api.ValueType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// gomemlimit leaves the guest GC headroom below the hard page limit: without
// it a Go guest with a live heap over about half the cap dies of OOM
// (shared/reference/wasm-measurements.md, follow-up §4).
func gomemlimit(limit uint64) string {
	return strconv.FormatUint(limit/100*85, 10)
}
