package hostabi

import (
	"encoding/binary"
	"errors"
)

// A frame carries a small JSON head and a raw body without base64: a
// little-endian uint32 length of the head, the head, then the body to the
// end of the frame.

// AppendFrame appends the frame of head and body to dst.
func AppendFrame(dst, head, body []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(head)))
	dst = append(dst, head...)
	return append(dst, body...)
}

// SplitFrame returns the head and body of a frame. Both alias b.
func SplitFrame(b []byte) (head, body []byte, err error) {
	if len(b) < 4 {
		return nil, nil, errors.New("frame shorter than its 4-byte header")
	}
	n := binary.LittleEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return nil, nil, errors.New("frame head longer than the frame")
	}
	return b[4 : 4+n], b[4+n:], nil
}
