package wasmhost

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/rpengine/rpengine/hostabi"
)

// NativeGuest is a plugin compiled into this process: the host reaches it
// through plain functions, so this package never imports the SDK (the
// SDK's own module depends on nothing of the engine's, and the host
// depends only on the ABI records). internal/testing/guesttest wires the SDK's
// dispatch into one.
type NativeGuest struct {
	// Label names the plugin in errors and logs.
	Label string
	// Handle answers one export call, as the wasm export would.
	Handle func(export string, in []byte) []byte
	// Bind hands the guest its host functions: http takes a request frame
	// (hostabi.AppendFrame of an HTTPRequestHead and body) and returns the
	// response frame; log takes a level and a message.
	Bind func(http func(frame []byte) []byte, log func(level int32, msg string))
}

// Native wraps g, run in this process, in a *Plugin: the engine-side code,
// its checks and its errors are those of a loaded plugin, and the guest's
// HTTP goes through the same gate as in the sandbox (Services,
// AuthHeader, caps). It exists for tests and benchmarks: there is no
// sandbox and no limit at all.
func Native(ctx context.Context, g NativeGuest, config []byte, opts Options) (*Plugin, error) {
	opts = opts.withDefaults()
	gt, err := newGate(opts)
	if err != nil {
		return nil, err
	}
	svc := newEngineServices(gt, opts.Logger, g.Label)
	if g.Bind != nil {
		g.Bind(func(frame []byte) []byte { return gt.do(ctx, frame) },
			func(level int32, msg string) { svc.logAt(ctx, int(level), msg) })
	}
	if config == nil {
		config = []byte("{}")
	}
	np, err := openWith(ctx, g.Label, opts, &nativeRunner{handle: g.Handle, config: config}, svc)
	if np != nil {
		np.info.Isolation = "native"
	}
	return np, err
}

type nativeRunner struct {
	handle func(export string, in []byte) []byte
	config []byte
}

func (r *nativeRunner) ensure(context.Context) error { return nil }
func (r *nativeRunner) discard(context.Context)      {}
func (r *nativeRunner) close(context.Context) error  { return nil }

func (r *nativeRunner) info() moduleInfo {
	return moduleInfo{Optional: sortedKeys(optional)} // the SDK exports every operation
}

func (r *nativeRunner) start(ctx context.Context) (string, error) {
	var out hostabi.ConfigureResponse
	var bad error
	err := r.call(ctx, hostabi.ExportConfigure, r.config, func(a io.Reader) error {
		bad = decodeAnswer(a, Limits{}, 1<<30, &out)
		return bad
	})
	if bad != nil {
		e := answerError(bad)
		e.Msg = "configure: " + e.Msg
		return "", e
	}
	if err != nil {
		return "", err
	}
	if out.Error.Error != "" {
		return "", failure(KindPlugin, "configure: %s", out.Error.Error)
	}
	return out.Name, nil
}

// call turns a panic into the trap a wasm instance would report.
func (r *nativeRunner) call(_ context.Context, export string, in []byte, answer func(io.Reader) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &Error{Kind: KindTrap, Msg: fmt.Sprintf("panicked: %v", v), Output: string(debug.Stack())}
		}
	}()
	return answer(bytes.NewReader(r.handle(export, in)))
}
