package wasmhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/rpengine/rpengine/hostabi"
)

// Plugin is a loaded inventory plugin. Its methods are safe for concurrent
// use; calls are serialised because one wasm instance cannot run two.
type Plugin struct {
	path     string
	opts     Options
	config   []byte
	rt       wazero.Runtime
	compiled wazero.CompiledModule

	mu   sync.Mutex
	mod  api.Module // nil after a trap, until the next call re-creates it
	fns  map[string]api.Function
	name string
}

// Name is the name the plugin gave itself in Configure.
func (p *Plugin) Name() string { return p.name }

// ListNodes asks the plugin for every node in scope.
func (p *Plugin) ListNodes(ctx context.Context, req hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	in, _ := json.Marshal(req)
	var out hostabi.ListNodesResponse
	if err := p.call(ctx, hostabi.ExportListNodes, in, &out, &out.Error); err != nil {
		return nil, err
	}
	if !out.Complete {
		return nil, fmt.Errorf("plugin %s: list_nodes answered without complete=true", p.name)
	}
	return out.Nodes, nil
}

// ListInstances asks the plugin for the consumers placed on nodes.
func (p *Plugin) ListInstances(ctx context.Context) ([]hostabi.Instance, error) {
	var out hostabi.ListInstancesResponse
	if err := p.call(ctx, hostabi.ExportListInstances, []byte("{}"), &out, &out.Error); err != nil {
		return nil, err
	}
	return out.Instances, nil
}

// Close releases the runtime and everything compiled in it.
func (p *Plugin) Close(ctx context.Context) error { return p.rt.Close(ctx) }

// instantiate creates a fresh instance, runs _initialize once, checks the
// ABI version and configures it. Called at load and after every trap.
func (p *Plugin) instantiate(ctx context.Context) error {
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions().
		WithSysNanotime().
		WithSysWalltime().
		WithStderr(p.opts.Stderr).
		WithEnv("GOMEMLIMIT", gomemlimit(p.opts.MemoryLimit))
	mod, err := p.rt.InstantiateModule(ctx, p.compiled, cfg)
	if err != nil {
		return fmt.Errorf("instantiate: %w", err)
	}
	p.mod, p.fns = mod, map[string]api.Function{}
	for name := range required {
		p.fns[name] = mod.ExportedFunction(name)
	}
	cctx, cancel := context.WithTimeout(ctx, p.opts.CallTimeout)
	defer cancel()
	if _, err := p.fns[hostabi.ExportInitialize].Call(cctx); err != nil {
		p.discard(ctx)
		return fmt.Errorf("_initialize: %w", err)
	}
	res, err := p.fns[hostabi.ExportABIVersion].Call(cctx)
	if err != nil {
		p.discard(ctx)
		return fmt.Errorf("%s: %w", hostabi.ExportABIVersion, err)
	}
	if v := int32(res[0]); v != hostabi.Version {
		p.discard(ctx)
		return fmt.Errorf("plugin speaks ABI version %d, this engine speaks %d", v, hostabi.Version)
	}
	var out hostabi.ConfigureResponse
	if err := p.invoke(ctx, hostabi.ExportConfigure, p.config, &out, &out.Error); err != nil {
		return err
	}
	p.name = out.Name
	return nil
}

// call runs one operation, re-creating the instance first if a previous
// call trapped.
func (p *Plugin) call(ctx context.Context, export string, in []byte, out any, perr *hostabi.Error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mod == nil {
		if err := p.instantiate(ctx); err != nil {
			return fmt.Errorf("plugin %s: restart after failure: %w", p.path, err)
		}
	}
	if err := p.invoke(ctx, export, in, out, perr); err != nil {
		return fmt.Errorf("plugin %s: %w", p.name, err)
	}
	return nil
}

// invoke copies in into guest memory, calls export under the time limit,
// copies the answer out and decodes it. Any failure of the call itself
// discards the instance: after a trap its runtime is not trustworthy.
func (p *Plugin) invoke(ctx context.Context, export string, in []byte, out any, perr *hostabi.Error) error {
	cctx, cancel := context.WithTimeout(ctx, p.opts.CallTimeout)
	defer cancel()
	raw, err := p.exchange(cctx, export, in)
	if err != nil {
		p.discard(ctx)
		if cctx.Err() != nil && ctx.Err() == nil {
			return fmt.Errorf("%s: exceeded the %s time limit: %w", export, p.opts.CallTimeout, err)
		}
		return fmt.Errorf("%s: %w", export, err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s: malformed answer: %w", export, err)
	}
	if perr.Error != "" {
		return fmt.Errorf("%s: %w", export, errors.New(perr.Error))
	}
	return nil
}

func (p *Plugin) exchange(ctx context.Context, export string, in []byte) ([]byte, error) {
	res, err := p.fns[hostabi.ExportAlloc].Call(ctx, uint64(len(in)))
	if err != nil {
		return nil, fmt.Errorf("alloc: %w", err)
	}
	ptr := uint32(res[0])
	if !p.mod.Memory().Write(ptr, in) {
		return nil, fmt.Errorf("alloc returned %#x, outside guest memory", ptr)
	}
	res, err = p.fns[export].Call(ctx, uint64(ptr), uint64(len(in)))
	if err != nil {
		return nil, err
	}
	optr, n := hostabi.Unpack(res[0])
	if n > p.opts.MaxResponse {
		return nil, fmt.Errorf("answer of %d bytes exceeds the %d-byte cap", n, p.opts.MaxResponse)
	}
	view, ok := p.mod.Memory().Read(optr, n)
	if !ok {
		return nil, fmt.Errorf("answer at %#x+%d lies outside guest memory", optr, n)
	}
	raw := append([]byte(nil), view...) // the view dies when memory grows
	if _, err := p.fns[hostabi.ExportFree].Call(ctx, uint64(ptr)); err != nil {
		return nil, fmt.Errorf("free: %w", err)
	}
	return raw, nil
}

func (p *Plugin) discard(ctx context.Context) {
	if p.mod != nil {
		p.mod.Close(ctx)
	}
	p.mod, p.fns = nil, nil
}
