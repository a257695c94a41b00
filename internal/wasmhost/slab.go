package wasmhost

import "unsafe"

// stringSlab cuts strings from shared byte slabs: one allocation for the
// own strings (uuid, name, instance) of some fifty nodes instead of one
// per node, which was the decoders' largest cost after the nodes
// themselves (allocation, and the GC work it brings). Bytes are only
// ever appended to a slab, never written again once handed out, so the
// strings may alias them. A node kept alone keeps at most one slab
// (slabBytes) alive, never a frame or an answer.
type stringSlab struct{ buf []byte }

// slabBytes is the size of one slab (a value longer gets its own).
const slabBytes = 4 << 10

// string returns a string holding a copy of p.
func (s *stringSlab) string(p []byte) string {
	if len(p) == 0 {
		return ""
	}
	if cap(s.buf)-len(s.buf) < len(p) {
		s.buf = make([]byte, 0, max(slabBytes, len(p)))
	}
	start := len(s.buf)
	s.buf = append(s.buf, p...)
	return unsafe.String(&s.buf[start], len(p))
}
