package wasmhost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
)

// Native wraps p, run in this process through the SDK's own dispatch
// (guest.Handle), in a *Plugin: the engine-side code, its checks and its
// errors are those of a loaded plugin, and guest.HTTP goes through the
// same gate as in the sandbox (Services, AuthHeader, caps). It exists for
// tests and benchmarks: there is no sandbox and no limit at all.
//
// # Notes
//
//   - guest.HTTP is process-global in native builds: the last Native
//     plugin made serves it.
func Native(ctx context.Context, p guest.Plugin, config []byte, opts Options) (*Plugin, error) {
	opts = opts.withDefaults()
	g, err := newGate(opts)
	if err != nil {
		return nil, err
	}
	label := fmt.Sprintf("%T (native)", p)
	svc := newEngineServices(g, opts.Logger, label)
	guest.SetHTTPForTest(func(req guest.HTTPRequest) (guest.HTTPResponse, error) {
		return nativeHTTP(ctx, g, req)
	})
	guest.SetLogForTest(func(level int32, msg string) { svc.logAt(ctx, int(level), msg) })
	if config == nil {
		config = []byte("{}")
	}
	np, err := openWith(ctx, label, opts, &nativeRunner{p: p, config: config}, svc)
	if np != nil {
		np.info.Isolation = "native"
	}
	return np, err
}

type nativeRunner struct {
	p      guest.Plugin
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
	out := guest.Handle(r.p, export, in)
	return answer(bytes.NewReader(out))
}

// nativeHTTP runs a guest request through the gate, frames and all.
func nativeHTTP(ctx context.Context, g *gate, req guest.HTTPRequest) (guest.HTTPResponse, error) {
	head, _ := json.Marshal(hostabi.HTTPRequestHead{Service: req.Service, Method: req.Method, Path: req.Path, Header: req.Header})
	rawHead, body, err := hostabi.SplitFrame(g.do(ctx, hostabi.AppendFrame(nil, head, req.Body)))
	if err != nil {
		return guest.HTTPResponse{}, err
	}
	var h hostabi.HTTPResponseHead
	if err := json.Unmarshal(rawHead, &h); err != nil {
		return guest.HTTPResponse{}, err
	}
	if h.Error != "" {
		return guest.HTTPResponse{}, fmt.Errorf("%s", strings.TrimSpace(h.Error))
	}
	return guest.HTTPResponse{Status: h.Status, Header: h.Header, Body: body}, nil
}
