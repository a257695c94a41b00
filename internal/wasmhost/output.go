package wasmhost

import (
	"bytes"
	"io"
	"strings"
)

const (
	// maxForward bounds what one call may write to Options.Stderr.
	maxForward = 64 << 10
	// tailSize is how much of a call's output an Error keeps.
	tailSize = 8 << 10
)

// guestOutput takes the guest's stdout and stderr during a call: it
// forwards a capped amount, keeps the tail for the error of a failed call,
// and spots the line that says why a Go guest died ("panic: ...",
// "fatal error: ..."), wherever it falls in a long trace.
type guestOutput struct {
	fwd     io.Writer
	fwdLeft int
	tail    []byte
	partial []byte // the current line, up to a bound
	cause   string // first panic/fatal line of this call
	oom     bool
	oomLine string // Go's "runtime: out of memory: cannot allocate ..."
}

func newGuestOutput(fwd io.Writer) *guestOutput { return &guestOutput{fwd: fwd, fwdLeft: maxForward} }

// reset starts a new call.
func (o *guestOutput) reset() {
	o.fwdLeft, o.tail, o.partial, o.cause, o.oom, o.oomLine = maxForward, o.tail[:0], o.partial[:0], "", false, ""
}

func (o *guestOutput) Write(b []byte) (int, error) {
	written := len(b)
	if o.fwdLeft > 0 {
		n := min(len(b), o.fwdLeft)
		o.fwd.Write(b[:n])
		if o.fwdLeft -= n; o.fwdLeft == 0 {
			io.WriteString(o.fwd, "\n[plugin output truncated]\n")
		}
	}
	o.tail = append(o.tail, b...)
	if len(o.tail) > 2*tailSize {
		o.tail = append(o.tail[:0], o.tail[len(o.tail)-tailSize:]...)
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			o.addPartial(b)
			break
		}
		o.addPartial(b[:i])
		o.line(string(o.partial))
		o.partial = o.partial[:0]
		b = b[i+1:]
	}
	return written, nil
}

func (o *guestOutput) addPartial(b []byte) {
	if room := 1024 - len(o.partial); room > 0 {
		o.partial = append(o.partial, b[:min(len(b), room)]...)
	}
}

func (o *guestOutput) line(l string) {
	if strings.Contains(l, "out of memory") {
		o.oom = true
		if o.oomLine == "" && strings.HasPrefix(l, "runtime: ") {
			o.oomLine = strings.TrimPrefix(strings.TrimPrefix(l, "runtime: "), "out of memory: ")
		}
	}
	if o.cause == "" && (strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ")) {
		o.cause = l
	}
}

// output is the kept tail of this call's output.
func (o *guestOutput) output() string {
	t := o.tail
	if len(t) > tailSize {
		t = t[len(t)-tailSize:]
	}
	return string(t)
}
