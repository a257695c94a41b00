package wasmhost

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rpengine/rpengine/hostabi"
)

// Plugin is a loaded inventory plugin. Its methods are safe for concurrent
// use; calls are serialised because one wasm instance cannot run two.
type Plugin struct {
	path string
	opts Options
	run  runner
	info Info

	gate *gate

	mu     sync.Mutex
	closed bool
}

// Info is what a plugin says about itself and what the load-time checks
// found in it.
type Info struct {
	ABIVersion int    `json:"abi_version"`
	Name       string `json:"name"`
	Version    string `json:"version,omitempty"`
	// Operations lists the optional operations the plugin supports (e.g.
	// "rpengine_confirm_deleted"): exported with the right signature and
	// declared by describe.
	Operations []string `json:"operations"`
	// Imports lists the host functions it uses ("rpengine.http_request").
	Imports   []string `json:"imports"`
	Isolation string   `json:"isolation"`
	// Services are the HTTP services the plugin declares it calls; nil
	// when it declares none at all (an older plugin).
	Services []hostabi.Service `json:"services"`
	// SHA256 is the digest of the module loaded, in hex: the value for
	// plugin.sha256.
	SHA256 string `json:"sha256"`
}

// runner is where the sandbox runs: in this process, or in a plugin host
// process that can be killed.
type runner interface {
	// ensure readies the runner (for a child: a live plugin host that
	// compiled the module); ctx is the caller's, not the call's limit.
	ensure(ctx context.Context) error
	// start makes an instance ready and returns its configured name.
	start(ctx context.Context) (string, error)
	// call runs export and streams its answer to answer; answer's
	// error is returned as is.
	call(ctx context.Context, export string, in []byte, answer func(io.Reader) error) error
	// discard drops the instance after an answer the host rejected.
	discard(ctx context.Context)
	info() moduleInfo
	close(ctx context.Context) error
}

// Load compiles the plugin at path, checks its exports, imports and ABI
// version, starts it and passes it config (the [plugin.config] table as
// JSON). Every error is an *Error naming the plugin.
func Load(ctx context.Context, path string, config []byte, opts Options) (*Plugin, error) {
	if config == nil {
		config = []byte("{}")
	}
	p, err := open(ctx, path, config, true, opts)
	if err != nil {
		return nil, err
	}
	if msg := ungranted(p.info.Services, opts.Services); msg != "" {
		p.Close(ctx)
		return nil, &Error{Plugin: p.info.Name, Op: "load", Kind: KindRefused, Msg: msg}
	}
	return p, nil
}

// Inspect loads the plugin at path without configuring it and returns
// what it says about itself. The same checks and limits as Load apply.
func Inspect(ctx context.Context, path string, opts Options) (Info, error) {
	p, err := open(ctx, path, nil, false, opts)
	if err != nil {
		return Info{}, err
	}
	defer p.Close(ctx)
	return p.info, nil
}

func open(ctx context.Context, path string, config []byte, configure bool, opts Options) (*Plugin, error) {
	opts = opts.withDefaults()
	g, err := newGate(opts)
	if err != nil {
		return nil, &Error{Plugin: path, Op: "load", Kind: KindHost, Msg: err.Error()}
	}
	svc := newEngineServices(g, opts.Logger, path)
	cfg := sandboxConfig{
		CacheDir: opts.CacheDir, MemoryLimit: opts.MemoryLimit, MaxResponse: opts.MaxResponse,
		Clock: opts.Clock, Configure: configure, Config: config, NoMemLimit: opts.noMemLimit,
		SHA256: opts.SHA256,
	}
	var r runner
	switch opts.Isolation {
	case InProcess, inProcessUnlimited:
		cfg.Interruptible = opts.Isolation == InProcess
		r, err = newInProcess(ctx, path, cfg, svc, opts)
	case ChildProcess:
		r, err = newChildHost(ctx, path, cfg, svc, opts)
	default:
		err = failure(KindHost, "unknown isolation %d", opts.Isolation)
	}
	if err != nil {
		p := &Plugin{path: path, opts: opts}
		return nil, p.wrap(ctx, ctx, "load", err)
	}
	return openWith(ctx, path, opts, r, svc)
}

// openWith starts an instance on r and asks the plugin to describe itself.
func openWith(ctx context.Context, path string, opts Options, r runner, svc *engineServices) (*Plugin, error) {
	p := &Plugin{path: path, opts: opts, run: r, gate: svc.gate}
	cctx, cancel := context.WithTimeout(ctx, opts.CallTimeout)
	defer cancel()
	name, err := r.start(cctx)
	if err != nil {
		r.close(ctx)
		return nil, p.wrap(ctx, cctx, "start", err)
	}
	dctx, cancel := context.WithTimeout(ctx, opts.CallTimeout)
	defer cancel()
	var d hostabi.DescribeResponse
	if err := p.exchange(dctx, hostabi.ExportDescribe, []byte("{}"), p.decoder(&d, nil), &d.Error); err != nil {
		r.close(ctx)
		return nil, p.wrap(ctx, dctx, "describe", err)
	}
	mod := r.info()
	p.info = Info{ABIVersion: hostabi.Version, Name: d.Name, Version: d.Version, Imports: append([]string{}, mod.Imports...),
		Operations: []string{}, Isolation: opts.Isolation.String(), Services: d.Services, SHA256: mod.SHA256}
	for _, op := range mod.Optional {
		if slices.Contains(d.Operations, op) {
			p.info.Operations = append(p.info.Operations, op)
		}
	}
	if name != "" {
		p.info.Name = name
	}
	if p.info.Name == "" {
		p.info.Name = filepath.Base(path)
	}
	svc.label.Store(&p.info.Name)
	return p, nil
}

// Name is the name the plugin gave itself (in Configure, else Describe).
func (p *Plugin) Name() string { return p.info.Name }

// Info is what the plugin said about itself at load.
func (p *Plugin) Info() Info { return p.info }

// Supports reports whether the plugin implements an export: always for a
// required one, and for an optional one when it was detected at load.
func (p *Plugin) Supports(export string) bool {
	if _, ok := required[export]; ok {
		return true
	}
	return slices.Contains(p.info.Operations, export)
}

// ListNodes asks the plugin for every node in scope.
func (p *Plugin) ListNodes(ctx context.Context, req hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	var kept *keptFrames
	fields := p.askFields(&req.NodeFields)
	if !p.opts.JSONAnswers && !fields {
		req.Accept = []string{hostabi.EncodingRecords}
		if p.offersRefs() {
			req.Accept, kept = append(req.Accept, hostabi.EncodingRefs), newKeptFrames(p.budget())
		}
	}
	in, _ := json.Marshal(req)
	var out hostabi.ListNodesResponse
	records := func(r *bufio.Reader) (err error) {
		if b, _ := r.Peek(len(hostabi.RefsMagic)); string(b) == hostabi.RefsMagic {
			out.Nodes, err = decodeNodeRefs(r, p.opts.Limits, p.budget(), kept)
		} else {
			out.Nodes, err = decodeNodeRecords(r, p.opts.Limits, p.budget())
		}
		out.Complete = err == nil // a binary answer is a complete listing
		return err
	}
	if err := p.callKeeping(ctx, hostabi.ExportListNodes, in, p.decoder(&out, records, nodeList(&out.Nodes)), &out.Error, kept); err != nil {
		return nil, err
	}
	if !out.Complete {
		return nil, p.named(hostabi.ExportListNodes, failure(KindBadAnswer, "answered without complete=true"))
	}
	checkNodeFields(out.Nodes, req.NodeFields)
	nameInvalid(p.info.Name, out.Nodes)
	return out.Nodes, nil
}

// offersRefs: the host offers answers by reference when it projects
// responses and keeps them (not RawBodies, not NoRefs).
func (p *Plugin) offersRefs() bool { return p.gate != nil && !p.opts.RawBodies && !p.opts.NoRefs }

// ListInstances asks the plugin for the consumers placed on nodes.
func (p *Plugin) ListInstances(ctx context.Context) ([]hostabi.Instance, error) {
	var req hostabi.ListInstancesRequest
	if !p.opts.JSONAnswers {
		req.Accept = []string{hostabi.EncodingRecords}
	}
	in, _ := json.Marshal(req)
	var out hostabi.ListInstancesResponse
	records := func(r *bufio.Reader) (err error) {
		out.Instances, err = decodeInstanceRecords(r, p.opts.Limits, p.budget())
		return err
	}
	if err := p.call(ctx, hostabi.ExportListInstances, in, p.decoder(&out, records, instanceList(&out.Instances)), &out.Error); err != nil {
		return nil, err
	}
	return out.Instances, nil
}

// ConfirmDeleted asks the plugin which of uuids it knows to be deleted and
// which present; a uuid in neither list is unknown. It fails if the plugin
// lacks the capability (see Supports) or answers about a uuid not asked,
// or puts one in both lists: a deletion proof must be exact.
func (p *Plugin) ConfirmDeleted(ctx context.Context, uuids []string) (deleted, present []string, err error) {
	const export = hostabi.ExportConfirmDeleted
	if !p.Supports(export) {
		return nil, nil, p.named(export, failure(KindRefused, "the plugin does not support this operation"))
	}
	in, _ := json.Marshal(hostabi.ConfirmDeletedRequest{UUIDs: uuids})
	var out hostabi.ConfirmDeletedResponse
	if err := p.call(ctx, export, in, p.decoder(&out, nil, uuidList("deleted", &out.Deleted), uuidList("present", &out.Present)), &out.Error); err != nil {
		return nil, nil, err
	}
	asked := make(map[string]bool, len(uuids))
	for _, u := range uuids {
		asked[u] = true
	}
	seen := make(map[string]bool, len(out.Deleted))
	for _, u := range out.Deleted {
		if !asked[u] {
			return nil, nil, p.named(export, failure(KindBadAnswer, "answered deleted for \"%s\", which was not asked", Printable(u)))
		}
		seen[u] = true
	}
	for _, u := range out.Present {
		if !asked[u] {
			return nil, nil, p.named(export, failure(KindBadAnswer, "answered present for \"%s\", which was not asked", Printable(u)))
		}
		if seen[u] {
			return nil, nil, p.named(export, failure(KindBadAnswer, "answered both deleted and present for \"%s\"", Printable(u)))
		}
	}
	return out.Deleted, out.Present, nil
}

// Close stops the plugin and releases everything compiled for it.
func (p *Plugin) Close(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	return p.run.close(ctx)
}

// decoder decodes an answer as it streams in, within the answer limits:
// JSON into out, lists naming out's listings, or, when records is set and
// the plugin answered in hostabi.EncodingRecords, with records.
func (p *Plugin) decoder(out any, records func(*bufio.Reader) error, lists ...listing) func(io.Reader) error {
	return func(r io.Reader) error {
		br := bufio.NewReaderSize(r, 64<<10)
		if records != nil && isRecords(br) {
			if p.opts.JSONAnswers {
				// ABI §4: an encoding the host did not offer is refused, as
				// a host that knows only JSON would.
				return &limitError{fmt.Sprintf("answer refused: in %s, which the host did not offer (only JSON)", hostabi.EncodingRecords)}
			}
			return records(br)
		}
		return decodeAnswer(br, p.opts.Limits, p.budget(), out, lists...)
	}
}

// call runs one operation under the time limit; any failure is an *Error
// and leaves nothing of the answer to use.
func (p *Plugin) call(ctx context.Context, export string, in []byte, decode func(io.Reader) error, perr *hostabi.Error) error {
	return p.callKeeping(ctx, export, in, decode, perr, nil)
}

// callKeeping is call with the gate keeping the projections the plugin
// asks it to keep in kept (nil: none), until the answer is decoded.
func (p *Plugin) callKeeping(ctx context.Context, export string, in []byte, decode func(io.Reader) error, perr *hostabi.Error, kept *keptFrames) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if kept != nil {
		p.gate.keep.Store(kept)
		defer p.gate.keep.Store(nil)
	}
	if p.closed {
		return p.named(export, failure(KindHost, "plugin is closed"))
	}
	if err := p.run.ensure(ctx); err != nil {
		return p.wrap(ctx, ctx, opName(export), err)
	}
	cctx, cancel := context.WithTimeout(ctx, p.opts.CallTimeout)
	defer cancel()
	if err := p.exchange(cctx, export, in, decode, perr); err != nil {
		return p.wrap(ctx, cctx, opName(export), err)
	}
	return nil
}

// exchange runs export and decodes its answer with decode as it streams
// in; perr is the answer's in-band error once decoded.
func (p *Plugin) exchange(ctx context.Context, export string, in []byte, decode func(io.Reader) error, perr *hostabi.Error) error {
	var bad error
	err := p.run.call(ctx, export, in, func(r io.Reader) error {
		bad = decode(r)
		return bad
	})
	if bad != nil {
		p.run.discard(ctx)
		return answerError(bad)
	}
	if err != nil {
		return err
	}
	if perr.Error != "" {
		return failure(KindPlugin, "%s", printableN(perr.Error, 1024)) // the plugin's own message: room for a URL
	}
	return nil
}

// budget is the decoded memory one answer may take: a quarter of the
// plugin's memory limit, so even with the GC's headroom an answer costs
// the engine less than the plugin may use itself.
func (p *Plugin) budget() int64 { return int64(p.opts.MemoryLimit / 4) }

// wrap names the plugin and the operation in err, and says which deadline
// a timeout hit: the plugin's time limit or the caller's.
func (p *Plugin) wrap(ctx, cctx context.Context, op string, err error) error {
	var e *Error
	if !errors.As(err, &e) {
		e = failure(KindHost, "%v", err)
	}
	if e.Kind == KindTimeout {
		switch {
		case ctx.Err() == nil && cctx.Err() != nil:
			e.Msg = fmt.Sprintf("exceeded the time limit of %s (plugin.timeout); %s", p.opts.CallTimeout, discardedBy(p.opts))
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			e.Msg = "the caller's deadline passed; " + discardedBy(p.opts)
		case ctx.Err() != nil:
			e.Msg = "canceled by the caller; " + discardedBy(p.opts)
		}
	}
	e.Plugin, e.Op = p.label(), op
	return e
}

func (p *Plugin) named(export string, e *Error) error {
	e.Plugin, e.Op = p.label(), opName(export)
	return e
}

func (p *Plugin) label() string {
	if p.info.Name != "" {
		return p.info.Name
	}
	return p.path
}

func discardedBy(o Options) string {
	if o.Isolation == ChildProcess {
		return "plugin host process killed"
	}
	return "instance discarded"
}

// engineServices is the engine's side of the host functions: HTTP through
// the gate, and the log tagged with the plugin's name.
type engineServices struct {
	gate   *gate
	logger *slog.Logger
	label  atomic.Pointer[string]
}

func newEngineServices(g *gate, logger *slog.Logger, label string) *engineServices {
	s := &engineServices{gate: g, logger: logger}
	s.label.Store(&label)
	return s
}

func (s *engineServices) http(ctx context.Context, frame []byte) []byte { return s.gate.do(ctx, frame) }

func (s *engineServices) log(ctx context.Context, level slog.Level, msg string) {
	s.logger.Log(ctx, level, msg, "plugin", *s.label.Load())
}

func (s *engineServices) logAt(ctx context.Context, level int, msg string) {
	s.log(ctx, slog.Level(level), msg)
}

// output logs a line of the plugin's stdout or stderr as data: the value
// of an attribute, which the handler escapes, never a line of its own.
func (s *engineServices) output(ctx context.Context, stream, line string) {
	if stream == "" {
		s.logger.Log(ctx, slog.LevelWarn, "plugin output dropped", "plugin", *s.label.Load(), "detail", line)
		return
	}
	s.logger.Log(ctx, slog.LevelWarn, "plugin output", "plugin", *s.label.Load(), "stream", stream, "line", line)
}

// inProcess runs the sandbox in the engine process, interruptible.
type inProcess struct{ sb *sandbox }

func newInProcess(ctx context.Context, path string, cfg sandboxConfig, svc *engineServices, opts Options) (*inProcess, error) {
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, failure(KindHost, "%v", err)
	}
	sb, err := newSandbox(ctx, wasm, cfg, svc)
	if err != nil {
		return nil, err
	}
	return &inProcess{sb}, nil
}

func (r *inProcess) ensure(context.Context) error { return nil }
func (r *inProcess) start(ctx context.Context) (string, error) {
	err := r.sb.start(ctx)
	return r.sb.name, err
}
func (r *inProcess) call(ctx context.Context, export string, in []byte, answer func(io.Reader) error) error {
	return r.sb.call(ctx, export, in, func(view []byte) error { return answer(bytes.NewReader(view)) })
}
func (r *inProcess) discard(ctx context.Context)     { r.sb.discard(ctx) }
func (r *inProcess) info() moduleInfo                { return r.sb.info }
func (r *inProcess) close(ctx context.Context) error { r.sb.close(ctx); return nil }
