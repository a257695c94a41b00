package wasmhost

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"

	"github.com/rpengine/rpengine/hostabi"
)

// childEnv marks a process started as a plugin host; its value is the
// version of the protocol in protocol.go, so an engine and a plugin host
// from different builds never talk past each other.
const (
	childEnv      = "RPENGINE_PLUGIN_HOST"
	childProtocol = "1"
)

// Any binary that links this package (the engine, a test binary) becomes
// the plugin host when the engine starts it with childEnv: the child needs
// no hidden verb, no TestMain hook and no second binary to install.
// RATIONALE.md, "Why the plugin host is the engine's own binary".
func init() {
	if v, ok := os.LookupEnv(childEnv); ok {
		if v != childProtocol {
			os.Stderr.WriteString("plugin host: protocol " + v + " requested, this binary speaks " + childProtocol + "\n")
			os.Exit(2)
		}
		os.Exit(serveChild(os.Stdin, os.Stdout, os.Stderr))
	}
}

// serveChild is the plugin host's loop: one sandbox, one request at a
// time, until the engine closes stdin (or kills us).
func serveChild(in io.Reader, out io.Writer, stderr io.Writer) int {
	link := &childLink{r: bufio.NewReaderSize(in, 64<<10), w: bufio.NewWriterSize(out, 64<<10)}
	ctx := context.Background() // the engine enforces every deadline by killing us
	var sb *sandbox
	for {
		op, payload, err := readFrame(link.r, 1<<32-2)
		if errors.Is(err, io.EOF) {
			return 0
		}
		if err != nil {
			io.WriteString(stderr, "plugin host: read request: "+err.Error()+"\n")
			return 3
		}
		switch {
		case op == opLoad && sb == nil:
			sb = loadChild(ctx, payload, link)
		case sb == nil:
			link.fail(failure(KindHost, "plugin host: request %q before load", op))
		case op == opStart:
			if err := sb.start(ctx); err != nil {
				link.fail(err)
				continue
			}
			link.send(opStarted, []byte(sb.name))
		case op == opCall:
			head, input, err := hostabi.SplitFrame(payload)
			if err != nil {
				link.fail(failure(KindHost, "plugin host: bad call: %v", err))
				continue
			}
			sent := false
			err = sb.call(ctx, string(head), input, func(view []byte) error {
				link.send(opResult, view) // from guest memory: the answer is never copied here
				sent = true
				return nil
			})
			if err != nil && !sent {
				link.fail(err)
			}
		case op == opDiscard:
			sb.discard(ctx)
			link.send(opDiscard2, nil)
		default:
			link.fail(failure(KindHost, "plugin host: unknown request %q", op))
		}
	}
}

// loadChild answers a load request: the sandbox made, or the failure
// sent (and then what newSandbox returned, or nil).
func loadChild(ctx context.Context, payload []byte, link *childLink) *sandbox {
	var req loadRequest
	if err := json.Unmarshal(payload, &req); err != nil {
		link.fail(failure(KindHost, "plugin host: bad load request: %v", err))
		return nil
	}
	wasm, err := os.ReadFile(req.Path)
	if err != nil {
		link.fail(failure(KindHost, "%v", err))
		return nil
	}
	req.Config.Interruptible = false // the engine kills this process instead
	sb, err := newSandbox(ctx, wasm, req.Config, link)
	if err != nil {
		link.fail(err)
		return sb
	}
	info, _ := json.Marshal(sb.info)
	link.send(opLoaded, info)
	return sb
}

// childLink is the sandbox's services in the plugin host: it forwards
// HTTP and log calls to the engine, which holds the authority.
type childLink struct {
	r *bufio.Reader
	w *bufio.Writer
}

func (l *childLink) send(op byte, payload ...[]byte) {
	if writeFrame(l.w, op, payload...) != nil || l.w.Flush() != nil {
		os.Exit(4) // the engine is gone
	}
}

func (l *childLink) fail(err error) {
	var e *Error
	if !errors.As(err, &e) {
		e = failure(KindHost, "%v", err)
	}
	raw, _ := json.Marshal(wireError{Kind: e.Kind, Msg: e.Msg, Output: e.Output})
	l.send(opError, raw)
}

func (l *childLink) http(_ context.Context, frame []byte) []byte {
	l.send(opHTTP, frame)
	op, resp, err := readFrame(l.r, 1<<32-2)
	if err != nil {
		os.Exit(4)
	}
	if op != opHTTPDone {
		return errorResponse("plugin host: engine answered %q to an HTTP request", op)
	}
	return resp
}

func (l *childLink) log(_ context.Context, level slog.Level, msg string) {
	raw, _ := json.Marshal(logLine{Level: int(level), Msg: msg})
	l.send(opLog, raw)
}

func (l *childLink) output(_ context.Context, stream, line string) {
	if stream == "" {
		stream = "-"
	}
	raw, _ := json.Marshal(logLine{Msg: line, Stream: stream})
	l.send(opLog, raw)
}
