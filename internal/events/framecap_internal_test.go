package events

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
)

// frame is one AMQP frame of kind on channel ch.
func frame(kind byte, ch uint16, payload []byte) []byte {
	out := []byte{kind, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint16(out[1:3], ch)
	binary.BigEndian.PutUint32(out[3:7], uint32(len(payload)))
	return append(append(out, payload...), frameEnd)
}

// header is a content header frame's payload announcing size bytes.
func header(size uint64) []byte {
	p := make([]byte, 14)
	binary.BigEndian.PutUint16(p[0:2], 60) // basic
	binary.BigEndian.PutUint64(p[4:12], size)
	return p
}

// readAll reads what a capConn over in passes on.
func readAll(t *testing.T, in []byte, limit int) ([]byte, *capConn, error) {
	t.Helper()
	a, b := net.Pipe()
	go func() { a.Write(in); a.Close() }()
	c := newCapConn(b, limit)
	out, err := io.ReadAll(c)
	return out, c, err
}

// A body over the limit is cut before it is read: its header passes with
// size 0 and its frames are thrown away; the message after it, on the
// same channel, and one on another channel pass whole.
func TestCapConnCutsABodyOverTheLimit(t *testing.T) {
	method := frame(1, 1, []byte("basic.deliver"))
	var in, want bytes.Buffer
	in.Write(method)
	in.Write(frame(frameHeader, 1, header(3*1000)))
	for range 3 {
		in.Write(frame(frameBody, 1, bytes.Repeat([]byte("x"), 1000)))
	}
	small := append(append(slices.Concat(method, frame(frameHeader, 1, header(5))), frame(frameBody, 1, []byte("hello"))...), frame(8, 0, nil)...)
	in.Write(small)
	want.Write(method)
	want.Write(frame(frameHeader, 1, header(0)))
	want.Write(small)
	out, c, err := readAll(t, in.Bytes(), 2000)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, want.Bytes()) {
		t.Fatalf("passed on %q\nwant %q", out, want.Bytes())
	}
	if c.cut.Load() != 1 || c.cutSize.Load() != 3000 || len(c.skip) != 0 {
		t.Fatalf("cut %d of %d bytes, skip %v", c.cut.Load(), c.cutSize.Load(), c.skip)
	}
}

// What no broker sends is refused by name: a frame over the negotiated
// maximum (before it is read) and a frame without its end octet.
func TestCapConnRefusesBadFrames(t *testing.T) {
	huge := []byte{frameBody, 0, 1, 0, 0x10, 0, 0}
	if _, _, err := readAll(t, huge, 100); err == nil || !strings.Contains(err.Error(), "over the") {
		t.Errorf("huge frame: %v", err)
	}
	bad := frame(frameBody, 1, []byte("x"))
	bad[len(bad)-1] = 0
	if _, _, err := readAll(t, bad, 100); err == nil || !strings.Contains(err.Error(), "frame-end") {
		t.Errorf("no frame end: %v", err)
	}
	if out, _, err := readAll(t, []byte("AMQP\x00\x00\x09\x01"), 100); err != nil || string(out) != "AMQP\x00\x00\x09\x01" {
		t.Errorf("the broker's protocol header: %q %v", out, err)
	}
}
