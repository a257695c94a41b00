package wasmhost

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/rpengine/rpengine/hostabi"
)

// childHost runs a plugin in a plugin host process: the same sandbox, in a
// child that is killed when a call overruns. wazero cannot stop a spinning
// guest without WithCloseOnContextDone, which makes Go guest code 6-25x
// slower; a kill costs nothing until it is needed (RATIONALE.md).
type childHost struct {
	opts Options
	load loadRequest
	svc  *engineServices
	proc *childProc // nil when no plugin host runs
	mod  moduleInfo
}

func newChildHost(ctx context.Context, path string, cfg sandboxConfig, svc *engineServices, opts Options) (*childHost, error) {
	c := &childHost{opts: opts, load: loadRequest{Path: path, Config: cfg}, svc: svc}
	return c, c.ensure(ctx)
}

func (c *childHost) info() moduleInfo { return c.mod }

// ensure starts a plugin host and has it compile and check the module,
// unless one runs. The compile is host work, bounded by compileTimeout
// rather than the call's time limit; with a warm cache it takes tenths
// of a second.
func (c *childHost) ensure(ctx context.Context) error {
	if c.proc != nil {
		select {
		case <-c.proc.exited: // died between calls (say, the kernel's OOM killer)
			c.stop()
		default:
			return nil
		}
	}
	p, err := startChild(c.opts, c.load.Path, c.svc)
	if err != nil {
		return err
	}
	c.proc = p
	ctx, cancel := context.WithTimeout(ctx, compileTimeout)
	defer cancel()
	req, _ := json.Marshal(c.load)
	_, info, err := c.exchange(ctx, opLoad, nil, req)
	if err != nil {
		c.stop()
		return err
	}
	return json.Unmarshal(info, &c.mod)
}

func (c *childHost) start(ctx context.Context) (string, error) {
	_, name, err := c.exchange(ctx, opStart, nil)
	return string(name), err
}

func (c *childHost) call(ctx context.Context, export string, in []byte, answer func(io.Reader) error) error {
	_, _, err := c.exchange(ctx, opCall, answer, hostabi.AppendFrame(nil, []byte(export), nil), in)
	return err
}

func (c *childHost) discard(ctx context.Context) {
	if c.proc != nil {
		c.exchange(ctx, opDiscard, nil)
	}
}

func (c *childHost) close(context.Context) error {
	c.stop()
	return nil
}

// exchange sends one request and serves the plugin's HTTP and log calls
// until the answer comes. When ctx ends first, the plugin host is killed:
// that is the time limit. With answer set, a call's result is streamed
// to it from the pipe, never held whole in the engine; its error is
// returned as is, after the rest of the result was read and dropped.
func (c *childHost) exchange(ctx context.Context, op byte, answer func(io.Reader) error, payload ...[]byte) (byte, []byte, error) {
	p := c.proc
	if p == nil {
		return 0, nil, failure(KindHost, "no plugin host process")
	}
	stop := context.AfterFunc(ctx, p.kill)
	defer stop()
	if err := p.send(op, payload...); err != nil {
		return 0, nil, c.lost(ctx, err)
	}
	limit := uint64(max(c.opts.MaxResponse, maxHTTPRequest)) + 64<<10
	for {
		op, n, err := readFrameHead(p.r, limit)
		if err != nil {
			return 0, nil, c.lost(ctx, err)
		}
		if op == opResult && answer != nil {
			body := io.LimitReader(p.r, int64(n))
			aerr := answer(body)
			if _, err := io.Copy(io.Discard, body); err != nil {
				return 0, nil, c.lost(ctx, err)
			}
			return op, nil, aerr
		}
		data := make([]byte, n)
		if _, err := io.ReadFull(p.r, data); err != nil {
			return 0, nil, c.lost(ctx, err)
		}
		switch op {
		case opHTTP:
			if err := p.send(opHTTPDone, c.svc.http(ctx, data)); err != nil {
				return 0, nil, c.lost(ctx, err)
			}
		case opLog:
			var l logLine
			switch {
			case json.Unmarshal(data, &l) != nil:
			case l.Stream == "-":
				c.svc.output(ctx, "", l.Msg)
			case l.Stream != "":
				c.svc.output(ctx, l.Stream, l.Msg)
			default:
				c.svc.logAt(ctx, l.Level, l.Msg)
			}
		case opError:
			var w wireError
			if err := json.Unmarshal(data, &w); err != nil {
				return 0, nil, c.lost(ctx, fmt.Errorf("bad error frame: %v", err))
			}
			return 0, nil, &Error{Kind: w.Kind, Msg: w.Msg, Output: w.Output}
		default:
			return op, data, nil
		}
	}
}

// lost ends the plugin host after a broken exchange and says why: the
// deadline (we killed it), or its death.
func (c *childHost) lost(ctx context.Context, err error) error {
	p := c.proc
	c.stop()
	if ctx.Err() != nil {
		return &Error{Kind: KindTimeout, Msg: "exceeded the time limit; plugin host process killed", Output: p.stderr.String()}
	}
	return &Error{Kind: KindHost, Msg: fmt.Sprintf("plugin host process died (%v; %v)%s", p.waitErr, err, p.lastWords()),
		Output: p.stderr.String()}
}

func (c *childHost) stop() {
	if c.proc != nil {
		c.proc.kill()
		c.proc.wait()
		c.proc = nil
	}
}

// childProc is one plugin host process and its pipes.
type childProc struct {
	cmd     *exec.Cmd
	w       *bufio.Writer
	wf, rf  *os.File
	r       *bufio.Reader
	stderr  *tail
	exited  chan struct{}
	waitErr error
	once    sync.Once
}

func startChild(opts Options, path string, svc *engineServices) (*childProc, error) {
	argv := opts.HostCommand
	if len(argv) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, failure(KindHost, "find the engine binary to run the plugin host: %v", err)
		}
		// The arguments only tell a reader of ps what this process is.
		argv = []string{exe, "plugin-host", filepath.Base(path)}
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, failure(KindHost, "pipe: %v", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, failure(KindHost, "pipe: %v", err)
	}
	p := &childProc{wf: inW, rf: outR, stderr: &tail{max: 4 << 10}, exited: make(chan struct{})}
	p.w, p.r = bufio.NewWriterSize(inW, 64<<10), bufio.NewReaderSize(outR, 64<<10)
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Env = childEnvironment()
	p.cmd.Stdin, p.cmd.Stdout = inR, outW
	// The plugin host's own stderr (a Go crash of the host, say) is data
	// too: logged line by line, tagged and capped, never copied raw.
	p.cmd.Stderr = io.MultiWriter(newHostStderr(svc), p.stderr)
	p.cmd.SysProcAttr = childProcAttr()
	err = p.cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, failure(KindHost, "start the plugin host %s: %v", argv[0], err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// childEnvironment is the plugin host's whole environment: the marker and
// what Go tooling needs, never the engine's (it may hold credentials).
func childEnvironment() []string {
	env := []string{childEnv + "=" + childProtocol}
	for _, k := range []string{"GOCOVERDIR", "GOTRACEBACK"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func (p *childProc) send(op byte, payload ...[]byte) error {
	if err := writeFrame(p.w, op, payload...); err != nil {
		return err
	}
	return p.w.Flush()
}

func (p *childProc) kill() { p.cmd.Process.Kill() }

func (p *childProc) wait() {
	p.once.Do(func() {
		<-p.exited
		p.wf.Close()
		p.rf.Close()
	})
}

// lastWords is the last line the plugin host wrote to stderr, if any.
func (p *childProc) lastWords() string {
	s := strings.TrimSpace(p.stderr.String())
	if s == "" {
		return ""
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return ": " + Printable(s)
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, b...)
	if len(t.b) > 2*t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.b) > t.max {
		return string(t.b[len(t.b)-t.max:])
	}
	return string(t.b)
}
