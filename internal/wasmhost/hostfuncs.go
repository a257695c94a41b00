package wasmhost

import (
	"context"
	"log/slog"
	"unicode/utf8"

	"github.com/tetratelabs/wazero/api"

	"github.com/rpengine/rpengine/hostabi"
)

const (
	// maxLogLine bounds what one log call may copy out of the guest.
	maxLogLine = 8 << 10
	// maxLogLines bounds the log calls of one plugin call that reach the
	// engine's log; the rest are counted and reported once.
	maxLogLines = 1000
)

// services is what the sandbox's host functions need from outside it: the
// engine's authority (HTTP with credentials) and its log. In-process it is
// the engine itself; in the plugin host process, a link back to it.
type services interface {
	// http answers one request frame with a response frame.
	http(ctx context.Context, frame []byte) []byte
	log(ctx context.Context, level slog.Level, msg string)
	// output takes one line the guest wrote to stream ("stdout",
	// "stderr"; "" for the host's note that lines were dropped).
	output(ctx context.Context, stream, line string)
}

// hostModule builds the hostabi.HostModule functions. They run where the
// guest runs (the plugin host process, by default), so anything needing
// the engine's authority goes through s.svc.
func (s *sandbox) hostModule(ctx context.Context) (api.Module, error) {
	b := s.rt.NewHostModuleBuilder(hostabi.HostModule)
	b = b.NewFunctionBuilder().WithFunc(s.log).Export(hostabi.ImportLog)
	b = b.NewFunctionBuilder().WithFunc(s.httpRequest).Export(hostabi.ImportHTTPRequest)
	b = b.NewFunctionBuilder().WithFunc(s.httpResponseRead).Export(hostabi.ImportHTTPResponseRead)
	b = withJSONProject(b, s.cfg.MemoryLimit)
	return b.Instantiate(ctx)
}

func (s *sandbox) log(ctx context.Context, m api.Module, level int32, ptr, n uint32) {
	if s.logLines++; s.logLines > maxLogLines {
		return
	}
	if n > maxLogLine {
		n = maxLogLine
	}
	msg, ok := m.Memory().Read(ptr, n)
	if !ok {
		return
	}
	for !utf8.Valid(msg) && len(msg) > 0 { // a cut may split a rune
		msg = msg[:len(msg)-1]
	}
	s.svc.log(ctx, slog.Level(level), string(msg))
}

// httpRequest performs the request and keeps the response frame for
// httpResponseRead, returning its length. A request the guest cannot even
// describe gets an error frame, like any refused request.
func (s *sandbox) httpRequest(ctx context.Context, m api.Module, ptr, n uint32) uint32 {
	s.pending = nil
	var frame []byte
	if n > maxHTTPRequest {
		frame = errorResponse("request of %d bytes exceeds the %d-byte cap", n, maxHTTPRequest)
	} else if req, ok := m.Memory().Read(ptr, n); !ok {
		frame = errorResponse("request at %#x+%d lies outside guest memory", ptr, n)
	} else {
		frame = s.svc.http(ctx, append([]byte(nil), req...))
	}
	s.pending = frame
	return uint32(len(frame))
}

// httpResponseRead copies up to n bytes of the pending response frame to
// guest memory and forgets it.
func (s *sandbox) httpResponseRead(_ context.Context, m api.Module, ptr, n uint32) uint32 {
	frame := s.pending
	s.pending = nil
	if uint32(len(frame)) < n {
		n = uint32(len(frame))
	}
	if !m.Memory().Write(ptr, frame[:n]) {
		return 0
	}
	return n
}
