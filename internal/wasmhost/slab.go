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

// slabBytes is the size of one slab. A value over an eighth of it gets
// an allocation of its own, so that the end of a slab left unused when
// the next value does not fit is at most an eighth of it: what the
// decoders charge a node against the memory budget stays what it costs.
const slabBytes = 4 << 10

// string returns a string holding a copy of p.
func (s *stringSlab) string(p []byte) string {
	switch {
	case len(p) == 0:
		return ""
	case len(p) > slabBytes/8:
		return string(p)
	case cap(s.buf)-len(s.buf) < len(p):
		s.buf = make([]byte, 0, slabBytes)
	}
	start := len(s.buf)
	s.buf = append(s.buf, p...)
	return unsafe.String(&s.buf[start], len(p))
}
