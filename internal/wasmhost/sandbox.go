package wasmhost

import (
	"bytes"
	"context"
	"crypto/rand"

	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/rpengine/rpengine/hostabi"
)

// sandboxConfig is what a sandbox needs besides the module. It crosses to
// the plugin host process as JSON.
type sandboxConfig struct {
	CacheDir    string `json:"cache_dir,omitempty"`
	MemoryLimit uint64 `json:"memory_limit"`
	MaxResponse uint32 `json:"max_response"`
	Clock       bool   `json:"clock,omitempty"`
	// Configure says whether each new instance gets Config through
	// ExportConfigure (Load) or stays unconfigured (Inspect).
	Configure bool   `json:"configure,omitempty"`
	Config    []byte `json:"config,omitempty"`
	// Interruptible enables WithCloseOnContextDone: the only in-process
	// way to stop a spinning guest, and a 6-25x slowdown of its code.
	Interruptible bool `json:"interruptible,omitempty"`
	// NoMemLimit leaves GOMEMLIMIT out (tests of the OOM it prevents).
	NoMemLimit bool `json:"no_mem_limit,omitempty"`
	// SHA256, if set, pins the module's digest (plugin.sha256): checked
	// on the bytes compiled, in whichever process compiles them.
	SHA256 string `json:"sha256,omitempty"`
}

// sandbox runs one compiled plugin in this process: one wazero runtime,
// one module, at most one instance at a time. It implements the instance
// lifecycle of ABI.md (_initialize once, version check, configure) and
// replaces the instance after any failed call. It is not safe for
// concurrent use.
type sandbox struct {
	cfg      sandboxConfig
	svc      services
	out      *guestOutput
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	info     moduleInfo

	mod      api.Module // nil until started, and after a failure
	fns      map[string]api.Function
	name     string // from configure
	pending  []byte // HTTP response frame awaiting http_response_read
	logLines int
}

// newSandbox compiles wasm and runs the load-time checks. Errors are
// *Error: KindRefused for a module this host will not run.
func newSandbox(ctx context.Context, wasm []byte, cfg sandboxConfig, svc services) (*sandbox, error) {
	rc := wazero.NewRuntimeConfigCompiler().
		WithMemoryLimitPages(uint32(cfg.MemoryLimit / pageSize)).
		WithCloseOnContextDone(cfg.Interruptible)
	if cfg.CacheDir != "" {
		cache, err := wazero.NewCompilationCacheWithDir(cfg.CacheDir)
		if err != nil {
			return nil, failure(KindHost, "compilation cache %s: %v", cfg.CacheDir, err)
		}
		rc = rc.WithCompilationCache(cache)
	}
	s := &sandbox{cfg: cfg, svc: svc, rt: wazero.NewRuntimeWithConfig(ctx, rc)}
	s.out = newGuestOutput(func(stream, line string) { svc.output(ctx, stream, line) })
	if err := s.load(ctx, wasm); err != nil {
		s.rt.Close(ctx)
		return nil, err
	}
	return s, nil
}

func (s *sandbox) load(ctx context.Context, wasm []byte) error {
	digest, err := pinned(wasm, s.cfg.SHA256)
	if err != nil {
		return err
	}
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, s.rt); err != nil {
		return failure(KindHost, "wasi: %v", err)
	}
	host, err := s.hostModule(ctx)
	if err != nil {
		return failure(KindHost, "host module: %v", err)
	}
	compiled, err := s.rt.CompileModule(ctx, wasm)
	if err != nil {
		if strings.Contains(err.Error(), "over limit") {
			return failure(KindRefused, "needs more memory than the limit of %d MiB: %v", s.cfg.MemoryLimit>>20, err)
		}
		return failure(KindRefused, "not a valid Wasm module: %v", err)
	}
	info, err := check(compiled, host.ExportedFunctionDefinitions())
	if err != nil {
		return failure(KindRefused, "%v", err)
	}
	info.SHA256 = digest
	s.compiled, s.info = compiled, info
	return nil
}

// moduleConfig is an instance's configuration: what the guest is granted.
func (s *sandbox) moduleConfig() wazero.ModuleConfig {
	cfg := wazero.NewModuleConfig().
		WithName("").        // anonymous: a replacement may coexist with the old one
		WithStartFunctions() // _initialize is called in start, exactly once
	if !s.cfg.NoMemLimit {
		cfg = cfg.WithEnv("GOMEMLIMIT", gomemlimit(s.cfg.MemoryLimit))
	}
	// Real randomness grants no authority, and wazero's deterministic
	// default would hand every instance the same "random" numbers.
	cfg = cfg.WithStdout(s.out.stream(0)).WithStderr(s.out.stream(1)).WithRandSource(rand.Reader)
	if s.cfg.Clock {
		cfg = cfg.WithSysWalltime().WithSysNanotime().WithSysNanosleep()
	}
	return cfg
}

// start makes sure an instance is ready: instantiated, _initialize run
// once, ABI version checked and, for Load, configured.
func (s *sandbox) start(ctx context.Context) error {
	if s.mod != nil {
		return nil
	}
	s.out.reset()
	defer s.out.finish()
	mod, err := s.rt.InstantiateModule(withGuestMemory(ctx), s.compiled, s.moduleConfig())
	if err != nil {
		return s.classify(ctx, fmt.Errorf("instantiate: %w", err))
	}
	s.mod, s.fns = mod, map[string]api.Function{}
	for name := range required {
		s.fns[name] = mod.ExportedFunction(name)
	}
	for _, name := range s.info.Optional {
		s.fns[name] = mod.ExportedFunction(name)
	}
	if _, err := s.fns[hostabi.ExportInitialize].Call(ctx); err != nil {
		return s.fail(ctx, "_initialize", err)
	}
	res, err := s.fns[hostabi.ExportABIVersion].Call(ctx)
	if err != nil {
		return s.fail(ctx, "abi_version", err)
	}
	if v := int32(res[0]); v != hostabi.Version {
		s.discard(ctx)
		return failure(KindRefused, "plugin speaks ABI version %d, this engine speaks version %d", v, hostabi.Version)
	}
	if !s.cfg.Configure {
		return nil
	}
	var out hostabi.ConfigureResponse
	err = s.exchange(ctx, hostabi.ExportConfigure, s.cfg.Config, func(view []byte) error {
		return decodeAnswer(bytes.NewReader(view), Limits{}, int64(s.cfg.MemoryLimit/4), &out)
	})
	var e *Error
	if err != nil && !errors.As(err, &e) {
		s.discard(ctx)
		e = answerError(err)
		e.Msg = "configure: " + e.Msg
		return e
	}
	if err != nil {
		return err
	}
	if out.Error.Error != "" {
		s.discard(ctx)
		return failure(KindPlugin, "configure: %s", printableN(out.Error.Error, 1024))
	}
	s.name = out.Name
	return nil
}

// call runs one operation on the instance, starting one first if needed,
// and hands the answer's bytes to sink. After any failure of the call
// the instance is gone.
func (s *sandbox) call(ctx context.Context, export string, in []byte, sink func([]byte) error) error {
	restart := s.mod == nil
	if err := s.start(ctx); err != nil {
		if restart {
			err.(*Error).Msg = "start a fresh instance: " + err.(*Error).Msg
		}
		return err
	}
	if s.fns[export] == nil {
		return failure(KindHost, "the plugin does not export %s", export)
	}
	return s.exchange(ctx, export, in, sink)
}

// exchange copies in into guest memory, calls export, and hands sink a
// view of the answer in guest memory: it is decoded (or sent to the
// engine) in place, never copied whole. sink's error is returned as is.
func (s *sandbox) exchange(ctx context.Context, export string, in []byte, sink func([]byte) error) error {
	s.out.reset()
	defer s.out.finish()
	s.logLines, s.pending = 0, nil
	res, err := s.fns[hostabi.ExportAlloc].Call(ctx, uint64(len(in)))
	if err != nil {
		return s.fail(ctx, "alloc", err)
	}
	ptr := uint32(res[0])
	if !s.mod.Memory().Write(ptr, in) {
		return s.bad(ctx, "alloc returned %#x, outside guest memory", ptr)
	}
	res, err = s.fns[export].Call(ctx, uint64(ptr), uint64(len(in)))
	if err != nil {
		return s.fail(ctx, "", err)
	}
	if s.logLines > maxLogLines {
		s.svc.log(ctx, slog.LevelWarn, fmt.Sprintf("%d log lines of this call dropped (limit %d)", s.logLines-maxLogLines, maxLogLines))
	}
	s.out.finish() // before the answer: the plugin host sends these notes first
	optr, n := hostabi.Unpack(res[0])
	if n > s.cfg.MaxResponse {
		return s.bad(ctx, "answer of %d bytes exceeds the %d-byte cap", n, s.cfg.MaxResponse)
	}
	view, ok := s.mod.Memory().Read(optr, n)
	if !ok {
		return s.bad(ctx, "answer at %#x+%d lies outside guest memory", optr, n)
	}
	if err := sink(view); err != nil {
		return err
	}
	if _, err := s.fns[hostabi.ExportFree].Call(ctx, uint64(ptr)); err != nil {
		return s.fail(ctx, "free", err)
	}
	return nil
}

// fail discards the instance after a failed guest call and says why.
func (s *sandbox) fail(ctx context.Context, what string, err error) *Error {
	e := s.classify(ctx, err)
	if what != "" {
		e.Msg = what + ": " + e.Msg
	}
	s.discard(ctx)
	return e
}

func (s *sandbox) bad(ctx context.Context, format string, args ...any) *Error {
	s.discard(ctx)
	return failure(KindBadAnswer, format, args...)
}

// classify turns a wazero error into an *Error, using what the guest wrote
// on its way down: Go prints the panic or the fatal error before trapping.
func (s *sandbox) classify(ctx context.Context, err error) *Error {
	e := &Error{Kind: KindTrap, Output: s.out.output()}
	var exit *sys.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == sys.ExitCodeDeadlineExceeded:
		e.Kind, e.Msg = KindTimeout, "exceeded the time limit"
	case errors.As(err, &exit) && exit.ExitCode() == sys.ExitCodeContextCanceled:
		e.Kind, e.Msg = KindTimeout, "canceled by the caller"
	case errors.As(err, &exit):
		e.Msg = fmt.Sprintf("exited with code %d", exit.ExitCode())
	case s.out.oom:
		e.Kind = KindOutOfMemory
		e.Msg = fmt.Sprintf("out of memory (limit %d MiB)", s.cfg.MemoryLimit>>20)
		if s.out.oomLine != "" {
			e.Msg += ": " + Printable(s.out.oomLine)
		}
	case strings.HasPrefix(s.out.cause, "panic: "):
		e.Msg = "panicked: " + Printable(strings.TrimPrefix(s.out.cause, "panic: "))
	case s.out.cause != "":
		e.Msg = "crashed: " + Printable(s.out.cause)
	default:
		e.Msg = "trapped: " + firstLine(err.Error())
	}
	return e
}

func (s *sandbox) discard(ctx context.Context) {
	if s.mod != nil {
		s.mod.Close(ctx)
	}
	s.mod, s.fns, s.pending = nil, nil, nil
}

func (s *sandbox) close(ctx context.Context) { s.rt.Close(ctx) }

// opName is an export's name as errors show it: "list_nodes".
func opName(export string) string { return strings.TrimPrefix(export, "rpengine_") }

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
