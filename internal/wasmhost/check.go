package wasmhost

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/rpengine/rpengine/hostabi"
)

type signature struct{ params, results []api.ValueType }

var (
	i32   = []api.ValueType{api.ValueTypeI32}
	i32x2 = []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}
	i64   = []api.ValueType{api.ValueTypeI64}
	// operation is the shape of every operation: (in_ptr, in_len) -> packed out.
	operation = signature{i32x2, i64}
)

// required lists each mandatory export with its wasm signature.
var required = map[string]signature{
	hostabi.ExportInitialize:    {nil, nil},
	hostabi.ExportABIVersion:    {nil, i32},
	hostabi.ExportAlloc:         {i32, i32},
	hostabi.ExportFree:          {i32, nil},
	hostabi.ExportDescribe:      operation,
	hostabi.ExportConfigure:     operation,
	hostabi.ExportListNodes:     operation,
	hostabi.ExportListInstances: operation,
}

// optional lists the operations a plugin may leave out; each one it
// exports must have this signature.
var optional = map[string]signature{
	hostabi.ExportConfirmDeleted: operation,
	hostabi.ExportMapEvents:      operation,
	hostabi.ExportReadNodes:      operation,
	hostabi.ExportRecentNodes:    operation,
}

// wasiModule is the only import module besides hostabi.HostModule: the
// host provides all of WASI preview 1, but grants it no files, sockets,
// environment (GOMEMLIMIT aside) or arguments.
const wasiModule = "wasi_snapshot_preview1"

// moduleInfo is what the load-time checks learn from a module.
type moduleInfo struct {
	// Optional lists the optional operations the module exports.
	Optional []string `json:"optional"`
	// Imports lists the host functions it imports, as "module.name".
	Imports []string `json:"imports"`
	// SHA256 is the digest of the bytes compiled, in hex.
	SHA256 string `json:"sha256"`
}

// check refuses a module that lacks an export, declares one with the wrong
// signature, or imports what the host does not provide, naming the culprit.
// host is the instantiated host module: what it exports is the truth.
func check(cm wazero.CompiledModule, host map[string]api.FunctionDefinition) (moduleInfo, error) {
	var info moduleInfo
	have := cm.ExportedFunctions()
	for _, name := range sortedKeys(required) {
		def, ok := have[name]
		if !ok {
			return info, fmt.Errorf("missing export %q (build the plugin with the hostabi/guest SDK and -buildmode=c-shared)", name)
		}
		if err := sameSignature(name, def, required[name]); err != nil {
			return info, err
		}
	}
	for _, name := range sortedKeys(optional) {
		if def, ok := have[name]; ok {
			if err := sameSignature(name, def, optional[name]); err != nil {
				return info, err
			}
			info.Optional = append(info.Optional, name)
		}
	}
	if _, ok := cm.ExportedMemories()["memory"]; !ok {
		return info, fmt.Errorf("missing exported memory %q", "memory")
	}
	for _, def := range cm.ImportedMemories() {
		mod, name, _ := def.Import()
		return info, fmt.Errorf("imports memory %s.%s: a plugin must own its memory", mod, name)
	}
	for _, def := range cm.ImportedFunctions() {
		mod, name, _ := def.Import()
		switch mod {
		case wasiModule:
		case hostabi.HostModule:
			want, ok := host[name]
			if !ok {
				return info, fmt.Errorf("imports %s.%s, which this host does not provide (ABI v%d)", mod, name, hostabi.Version)
			}
			if !slices.Equal(def.ParamTypes(), want.ParamTypes()) || !slices.Equal(def.ResultTypes(), want.ResultTypes()) {
				return info, fmt.Errorf("imports %s.%s as %s, but the host provides %s", mod, name,
					sigString(def.ParamTypes(), def.ResultTypes()), sigString(want.ParamTypes(), want.ResultTypes()))
			}
			info.Imports = append(info.Imports, mod+"."+name)
		default:
			return info, fmt.Errorf("imports %s.%s: only %s and %s are available", mod, name, hostabi.HostModule, wasiModule)
		}
	}
	slices.Sort(info.Imports)
	info.Imports = slices.Compact(info.Imports)
	return info, nil
}

func sameSignature(name string, def api.FunctionDefinition, want signature) error {
	if slices.Equal(def.ParamTypes(), want.params) && slices.Equal(def.ResultTypes(), want.results) {
		return nil
	}
	return fmt.Errorf("export %q has signature %s, want %s", name,
		sigString(def.ParamTypes(), def.ResultTypes()), sigString(want.params, want.results))
}

func sigString(params, results []api.ValueType) string {
	names := func(ts []api.ValueType) string {
		s := make([]string, len(ts))
		for i, t := range ts {
			s[i] = api.ValueTypeName(t)
		}
		return "(" + strings.Join(s, ", ") + ")"
	}
	return names(params) + " -> " + names(results)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// gomemlimit leaves the guest GC headroom below the hard page limit: without
// it a Go guest with a live heap over about half the cap dies of OOM
// (measured with Go 1.26 guests in wazero).
func gomemlimit(limit uint64) string {
	return strconv.FormatUint(limit/100*85, 10)
}
