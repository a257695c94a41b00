package events

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
)

// A message over the limit is skipped before it is read into memory.
//
// amqp091-go reads a message's whole body into one slice before the
// consumer sees it, and RabbitMQ delivers to a waiting consumer whatever
// a queue's length limits say (they apply to what waits in the queue). So
// the connection is read through capConn, which parses the AMQP frames
// as they pass: a content header announcing a body over the limit is
// passed on with a body size of 0, and that body's frames are read and
// thrown away, one frame at a time. The client sees an empty message; the
// source counts it as dropped (received). Memory stays one frame.

// maxFrame bounds one frame: the client asks for RabbitMQ's default
// frame_max (128 KiB), which the broker may only lower.
const maxFrame = 1 << 17

// AMQP 0-9-1 frame types and the frame-end octet (spec 4.2.3).
const (
	frameHeader = 2
	frameBody   = 3
	frameEnd    = 0xCE
)

// capConn reads a broker connection, cutting bodies over limit.
type capConn struct {
	net.Conn
	limit   uint64
	out     []byte            // frames read and not yet returned
	buf     []byte            // out's storage, reused once out is empty
	skip    map[uint16]uint64 // channel -> body bytes still to throw away
	started bool              // past the protocol header a broker may send back
	cut     atomic.Int64      // bodies cut, for received
	cutSize atomic.Int64      // the last cut body's size
}

func newCapConn(c net.Conn, limit int) *capConn {
	return &capConn{Conn: c, limit: uint64(limit), skip: map[uint16]uint64{}}
}

// Read returns the stream with over-limit bodies cut.
func (c *capConn) Read(p []byte) (int, error) {
	for len(c.out) == 0 {
		if err := c.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	return n, nil
}

// next reads one frame into out, or throws it away.
func (c *capConn) next() error {
	var h [7]byte
	if _, err := io.ReadFull(c.Conn, h[:]); err != nil {
		return err
	}
	if !c.started && string(h[:4]) == "AMQP" { // the broker refused our protocol: pass its own on
		c.out = append(c.out[:0], h[:]...)
		rest := make([]byte, 1)
		_, err := io.ReadFull(c.Conn, rest)
		c.out = append(c.out, rest...)
		return err
	}
	c.started = true
	kind, ch, size := h[0], binary.BigEndian.Uint16(h[1:3]), binary.BigEndian.Uint32(h[3:7])
	if size > maxFrame {
		return fmt.Errorf("amqp: a frame of %d bytes, over the %d negotiated at most", size, maxFrame)
	}
	if kind == frameBody && c.skip[ch] > 0 {
		return c.throwAway(ch, size)
	}
	frame := append(c.buf[:0], h[:]...) // out is empty: its buffer is free again
	frame = append(frame, make([]byte, int(size)+1)...)
	c.buf = frame
	if _, err := io.ReadFull(c.Conn, frame[7:]); err != nil {
		return err
	}
	if frame[len(frame)-1] != frameEnd {
		return errFrameEnd
	}
	if kind == frameHeader && size >= 12 {
		body := binary.BigEndian.Uint64(frame[7+4 : 7+12]) // after class-id and weight
		if body > c.limit {
			binary.BigEndian.PutUint64(frame[7+4:7+12], 0)
			c.skip[ch] = body
			c.cutSize.Store(int64(body))
			c.cut.Add(1)
		}
	}
	c.out = frame
	return nil
}

var errFrameEnd = errors.New("amqp: a frame without its frame-end octet")

// throwAway reads one body frame of a cut message without keeping it.
func (c *capConn) throwAway(ch uint16, size uint32) error {
	if _, err := io.CopyN(io.Discard, c.Conn, int64(size)); err != nil {
		return err
	}
	var end [1]byte
	if _, err := io.ReadFull(c.Conn, end[:]); err != nil {
		return err
	}
	if end[0] != frameEnd {
		return errFrameEnd
	}
	c.skip[ch] -= min(c.skip[ch], uint64(size))
	if c.skip[ch] == 0 {
		delete(c.skip, ch)
	}
	return nil
}
