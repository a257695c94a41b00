package wasmhost

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

const (
	// maxOutputLines bounds the lines of one call's stdout and stderr that
	// reach the engine's log; the rest are counted and reported once.
	maxOutputLines = 50
	// maxOutputLine is the longest line kept; the rest of it is dropped.
	maxOutputLine = 512
	// tailSize is how much of a call's output an Error keeps.
	tailSize = 8 << 10
)

// guestOutput takes the guest's stdout and stderr during a call. Nothing
// of it reaches the engine's streams raw: each line becomes an attribute
// of a log record tagged with the plugin's name (emit), escaped by the
// log handler, cut at maxOutputLine, at most maxOutputLines per call, so
// a plugin cannot print a line an operator would take for the engine's.
// It also keeps the tail for the error of a failed call, and spots the
// line that says why a Go guest died ("panic: ...", "fatal error: ..."),
// wherever it falls in a long trace.
type guestOutput struct {
	emit    func(stream, line string)
	lines   int // lines of this call seen
	tail    []byte
	partial [2][]byte // the current line of stdout and stderr, up to a bound
	cause   string    // first panic/fatal line of this call
	oom     bool
	oomLine string // Go's "runtime: out of memory: cannot allocate ..."
	done    bool   // finish ran for this call
}

var streamNames = [2]string{"stdout", "stderr"}

func newGuestOutput(emit func(stream, line string)) *guestOutput {
	return &guestOutput{emit: emit}
}

// stream is the writer of stdout (0) or stderr (1).
func (o *guestOutput) stream(i int) io.Writer { return streamWriter{o, i} }

type streamWriter struct {
	o *guestOutput
	i int
}

func (w streamWriter) Write(b []byte) (int, error) { return w.o.write(w.i, b), nil }

// reset starts a new call.
func (o *guestOutput) reset() {
	o.lines, o.tail, o.cause, o.oom, o.oomLine, o.done = 0, o.tail[:0], "", false, "", false
	o.partial[0], o.partial[1] = o.partial[0][:0], o.partial[1][:0]
}

// finish ends a call: a last unterminated line is emitted, and the count
// of lines dropped over the cap is reported once.
func (o *guestOutput) finish() {
	if o.done {
		return
	}
	o.done = true
	for i := range o.partial {
		if len(o.partial[i]) > 0 {
			o.complete(i)
		}
	}
	if o.lines > maxOutputLines {
		o.emit("", fmt.Sprintf("%d more lines of output dropped (limit %d per call)", o.lines-maxOutputLines, maxOutputLines))
	}
}

func (o *guestOutput) write(i int, b []byte) int {
	written := len(b)
	o.tail = append(o.tail, b...)
	if len(o.tail) > 2*tailSize {
		o.tail = append(o.tail[:0], o.tail[len(o.tail)-tailSize:]...)
	}
	for len(b) > 0 {
		j := bytes.IndexByte(b, '\n')
		if j < 0 {
			o.addPartial(i, b)
			break
		}
		o.addPartial(i, b[:j])
		o.complete(i)
		b = b[j+1:]
	}
	return written
}

func (o *guestOutput) addPartial(i int, b []byte) {
	if room := maxOutputLine - len(o.partial[i]); room > 0 {
		o.partial[i] = append(o.partial[i], b[:min(len(b), room)]...)
	}
}

func (o *guestOutput) complete(i int) {
	l := string(o.partial[i])
	o.partial[i] = o.partial[i][:0]
	o.classify(l)
	if o.lines++; o.lines <= maxOutputLines {
		o.emit(streamNames[i], l)
	}
}

func (o *guestOutput) classify(l string) {
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

// maxQuoted is the longest prefix of an outside value an error quotes.
const maxQuoted = 200

// Printable returns s as an error may show it: control characters and
// invalid UTF-8 escaped (no part of it can start a new line of the
// engine's output), and cut to a short prefix that says how long the
// whole was.
func Printable(s string) string { return printableN(s, maxQuoted) }

// printableN is Printable with a prefix of n bytes.
func printableN(s string, n int) string {
	cut := s
	if len(cut) > n {
		cut = cut[:n]
	}
	var b strings.Builder
	for i, r := range cut {
		switch {
		case r == utf8.RuneError && len(cut[i:]) > 0 && !strings.HasPrefix(cut[i:], "\uFFFD"):
			fmt.Fprintf(&b, "\\x%02x", cut[i])
		case unicode.IsControl(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	if len(cut) < len(s) {
		fmt.Fprintf(&b, "... (%d bytes)", len(s))
	}
	return b.String()
}

// maxHostStderrLines bounds the lines of one plugin host process's own
// stderr that are logged; it only writes when something is badly wrong.
const maxHostStderrLines = 100

// hostStderr logs the plugin host process's stderr line by line, through
// the plugin's tagged records.
type hostStderr struct {
	mu      sync.Mutex
	svc     *engineServices
	partial []byte
	lines   int
}

func newHostStderr(svc *engineServices) *hostStderr { return &hostStderr{svc: svc} }

func (h *hostStderr) Write(b []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(b)
	for len(b) > 0 {
		j := bytes.IndexByte(b, '\n')
		if j < 0 {
			h.add(b)
			break
		}
		h.add(b[:j])
		h.line()
		b = b[j+1:]
	}
	return n, nil
}

func (h *hostStderr) add(b []byte) {
	if room := maxOutputLine - len(h.partial); room > 0 {
		h.partial = append(h.partial, b[:min(len(b), room)]...)
	}
}

func (h *hostStderr) line() {
	l := string(h.partial)
	h.partial = h.partial[:0]
	switch h.lines++; {
	case h.lines <= maxHostStderrLines:
		h.svc.output(context.Background(), "plugin-host", l)
	case h.lines == maxHostStderrLines+1:
		h.svc.output(context.Background(), "", "further output of the plugin host process dropped")
	}
}
