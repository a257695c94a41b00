package wasmhost

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// The engine and its plugin host process talk in frames over the child's
// stdin and stdout: a little-endian uint32 length of what follows, one op
// byte, then the payload. Requests go one at a time; while a call runs
// the child may send HTTP and log frames, and the engine answers the HTTP
// ones, until the child sends the call's result or error.
const (
	opLoad     = 'L' // engine: sandboxConfig JSON + module path; child: opLoaded or opError
	opLoaded   = 'l' // child: moduleInfo JSON
	opStart    = 'S' // engine: (empty); child: opStarted or opError
	opStarted  = 's' // child: configured name
	opCall     = 'C' // engine: frame(export, input); child: opResult or opError
	opResult   = 'r' // child: the answer's bytes
	opDiscard  = 'D' // engine: drop the instance; child: opDiscarded
	opDiscard2 = 'd' // child: done
	opError    = 'E' // child: wireError JSON
	opHTTP     = 'H' // child: request frame; engine answers opHTTPDone
	opHTTPDone = 'h' // engine: response frame
	opLog      = 'G' // child: logLine JSON; no answer
)

// wireError is an *Error on the wire, before the engine names the plugin.
type wireError struct {
	Kind   Kind   `json:"kind"`
	Msg    string `json:"msg"`
	Output string `json:"output,omitempty"`
}

type logLine struct {
	Level int    `json:"level"`
	Msg   string `json:"msg"`
	// Stream is set for a line of the guest's stdout or stderr ("-" for
	// the note that lines were dropped), not a log call.
	Stream string `json:"stream,omitempty"`
}

type loadRequest struct {
	Path   string        `json:"path"`
	Config sandboxConfig `json:"config"`
}

func writeFrame(w io.Writer, op byte, payload ...[]byte) error {
	n := 1
	for _, p := range payload {
		n += len(p)
	}
	hdr := binary.LittleEndian.AppendUint32(make([]byte, 0, 5), uint32(n))
	if _, err := w.Write(append(hdr, op)); err != nil {
		return err
	}
	for _, p := range payload {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// readFrame reads one frame, refusing one longer than limit.
func readFrame(r *bufio.Reader, limit uint64) (byte, []byte, error) {
	op, n, err := readFrameHead(r, limit)
	if err != nil {
		return 0, nil, err
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return 0, nil, err
	}
	return op, buf, nil
}

// readFrameHead reads a frame's length and op, leaving its n payload
// bytes to read, so a large payload can be streamed.
func readFrameHead(r *bufio.Reader, limit uint64) (op byte, n uint32, err error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, 0, err
	}
	size := binary.LittleEndian.Uint32(hdr[:4])
	if size == 0 || uint64(size) > limit+1 {
		return 0, 0, fmt.Errorf("frame of %d bytes (limit %d)", size, limit)
	}
	return hdr[4], size - 1, nil
}
