package projection

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unsafe"
)

// The projection crosses the host boundary twice: the spec goes in as
// text, the records come back in a flat little-endian frame the guest
// reads in place (no parsing, no per-string copy):
//
//	"RPJ1" status:u32
//	status 0: nrec nfields ntop nlist bloblen (u32 each)
//	          slots [nrec*nfields](a,b u32)  top [ntop](a,b)  list [nlist](off,len)  blob
//	status 1: UTF-8 error message
//
// A slot's b is nullMark or absentMark, else: strings and raw values are
// blob[a:a+b]; bools are a (0 or 1) with b = 0; string lists are b entries
// of list from index a.
const (
	wireMagic  = "RPJ1"
	headerLen  = 4 + 4 + 5*4
	nullMark   = 0xFFFFFFFF
	absentMark = 0xFFFFFFFE
	statusOK   = 0
	statusErr  = 1
)

func pairAt(p []uint32, k int) (uint32, uint32) { return p[2*k], p[2*k+1] }

// words views b (little-endian uint32s, 4-byte aligned: frames start at
// an allocation and the header is 28 bytes) as []uint32 without copying;
// on a big-endian machine it decodes a copy instead.
func words(b []byte) []uint32 {
	if len(b) == 0 {
		return nil
	}
	if littleEndian && uintptr(unsafe.Pointer(unsafe.SliceData(b)))%4 == 0 {
		return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
	}
	w := make([]uint32, len(b)/4)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return w
}

var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// parseWire reads a frame. It takes ownership of frame: the strings of the
// result alias it, so it must never be written again.
func parseWire(frame []byte) (Records, error) {
	if len(frame) < 8 || string(frame[:4]) != wireMagic {
		return Records{}, errors.New("json projection: malformed answer from the host")
	}
	if binary.LittleEndian.Uint32(frame[4:]) != statusOK {
		return Records{}, errors.New(string(frame[8:]))
	}
	if len(frame) < headerLen {
		return Records{}, errors.New("json projection: short answer from the host")
	}
	h := make([]uint64, 5)
	for i := range h {
		h[i] = uint64(binary.LittleEndian.Uint32(frame[8+4*i:]))
	}
	nrec, nf, ntop, nlist, nblob := h[0], h[1], h[2], h[3], h[4]
	sizes := []uint64{8 * nrec * nf, 8 * ntop, 8 * nlist, nblob}
	need := uint64(headerLen)
	for _, s := range sizes {
		need += s
	}
	if need != uint64(len(frame)) {
		return Records{}, fmt.Errorf("json projection: answer is %d bytes, header says %d", len(frame), need)
	}
	r := Records{n: int(nrec), nf: int(nf)}
	rest := frame[headerLen:]
	r.slots, rest = words(rest[:sizes[0]]), rest[sizes[0]:]
	r.top, rest = words(rest[:sizes[1]]), rest[sizes[1]:]
	r.list, rest = words(rest[:sizes[2]]), rest[sizes[2]:]
	if len(rest) > 0 {
		r.blob = unsafe.String(unsafe.SliceData(rest), len(rest))
	}
	return r, nil
}

// encodeSpec turns p into the text the host reads: one line per item,
// "A<array>", then "F<kind><name>" per field and "T<kind><name>" per top
// member, kind being one digit.
func encodeSpec(p Projection) ([]byte, error) {
	var b strings.Builder
	line := func(tag byte, k Kind, name string) error {
		if strings.ContainsAny(name, "\n") {
			return fmt.Errorf("json projection: field name %q contains a newline", name)
		}
		b.WriteByte(tag)
		if tag != 'A' {
			if k < KindString || k > KindRaw {
				return fmt.Errorf("json projection: field %q has no valid kind", name)
			}
			b.WriteByte('0' + byte(k))
		}
		b.WriteString(name)
		b.WriteByte('\n')
		return nil
	}
	if err := line('A', 0, p.Array); err != nil {
		return nil, err
	}
	for _, f := range p.Fields {
		if err := line('F', f.Kind, f.Name); err != nil {
			return nil, err
		}
	}
	for _, f := range p.Top {
		if err := line('T', f.Kind, f.Name); err != nil {
			return nil, err
		}
	}
	return []byte(b.String()), nil
}

// decodeSpec is the inverse of encodeSpec, run by the host.
func decodeSpec(spec []byte) (Projection, error) {
	var p Projection
	lines := strings.Split(string(spec), "\n")
	if len(lines) < 2 || lines[len(lines)-1] != "" || !strings.HasPrefix(lines[0], "A") {
		return p, errors.New("json projection: malformed spec")
	}
	p.Array = lines[0][1:]
	for _, l := range lines[1 : len(lines)-1] {
		if len(l) < 2 || l[1] < '0'+byte(KindString) || l[1] > '0'+byte(KindRaw) {
			return p, fmt.Errorf("json projection: malformed spec line %q", l)
		}
		f := Field{Name: l[2:], Kind: Kind(l[1] - '0')}
		switch l[0] {
		case 'F':
			p.Fields = append(p.Fields, f)
		case 'T':
			p.Top = append(p.Top, f)
		default:
			return p, fmt.Errorf("json projection: malformed spec line %q", l)
		}
	}
	return p, nil
}

// wireWriter accumulates a frame on the native side.
type wireWriter struct {
	slots []uint32
	top   []uint32
	list  []uint32
	blob  []byte
}

// size is the length of the frame so far.
func (w *wireWriter) size() int {
	return headerLen + 4*(len(w.slots)+len(w.top)+len(w.list)) + len(w.blob)
}

// frame lays the frame out after headroom free bytes.
func (w *wireWriter) frame(headroom, nrec, nf int) []byte {
	head := []uint32{uint32(nrec), uint32(nf), uint32(len(w.top) / 2), uint32(len(w.list) / 2), uint32(len(w.blob))}
	out := make([]byte, headroom+8, headroom+w.size())
	copy(out[headroom:], wireMagic)
	for _, part := range [][]uint32{head, w.slots, w.top, w.list} {
		for _, v := range part {
			out = binary.LittleEndian.AppendUint32(out, v)
		}
	}
	return append(out, w.blob...)
}

func errorFrame(msg string) []byte {
	out := make([]byte, 8, 8+len(msg))
	copy(out, wireMagic)
	binary.LittleEndian.PutUint32(out[4:], statusErr)
	return append(out, msg...)
}

// EncodeSpec is the text of p the host reads (the guest's side).
func EncodeSpec(p Projection) ([]byte, error) { return encodeSpec(p) }

// ParseWire reads a frame the host wrote (the guest's side); it takes
// ownership of frame.
func ParseWire(frame []byte) (Records, error) { return parseWire(frame) }
