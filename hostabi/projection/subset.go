package projection

import "fmt"

// Subset answers, from a frame projected by from, the frame that
// projecting the same document by to would give, when to is within from
// (SubsetOf): the host projects a page once by what it keeps and hands
// the plugin only what it reads (hostabi.HTTPRequestHead.Keep). An error
// frame stays as it is; frame is only read.
func Subset(frame []byte, from, to Projection, headroom int) ([]byte, error) {
	r, err := parseWire(frame)
	if err != nil {
		return append(make([]byte, headroom, headroom+len(frame)), frame...), nil // the error frame
	}
	fields, err := positions(from.Fields, to.Fields)
	if err != nil {
		return nil, err
	}
	top, err := positions(from.Top, to.Top)
	if err != nil {
		return nil, err
	}
	blob, list := subsetSize(&r, fields, to.Fields, top, to.Top)
	w := &wireWriter{slots: make([]uint32, 0, 2*r.n*len(to.Fields)), top: make([]uint32, 0, 2*len(to.Top)),
		list: make([]uint32, 0, 2*list), blob: make([]byte, 0, blob)}
	for i := range r.n {
		for j, f := range fields {
			a, b := r.slot(i, f)
			w.slots = w.appendPair(w.slots, &r, to.Fields[j].Kind, a, b)
		}
	}
	for j, f := range top {
		a, b := pairAt(r.top, f)
		w.top = w.appendPair(w.top, &r, to.Top[j].Kind, a, b)
	}
	return w.frame(headroom, r.n, len(to.Fields)), nil
}

// subsetSize is the blob bytes and list entries the subset takes, so
// that its buffers are sized once rather than grown by doubling.
func subsetSize(r *Records, fields []int, to []Field, top []int, toTop []Field) (blob, list int) {
	add := func(k Kind, a, b uint32) {
		switch {
		case b >= absentMark || k == KindBool:
		case k == KindStrings:
			list += int(b)
			for e := a; e < a+b; e++ {
				_, l := pairAt(r.list, int(e))
				blob += int(l)
			}
		default:
			blob += int(b)
		}
	}
	for i := range r.n {
		for j, f := range fields {
			a, b := r.slot(i, f)
			add(to[j].Kind, a, b)
		}
	}
	for j, f := range top {
		a, b := pairAt(r.top, f)
		add(toTop[j].Kind, a, b)
	}
	return blob, list
}

// appendPair copies one value of r into w, appending its pair to dst.
func (w *wireWriter) appendPair(dst []uint32, r *Records, k Kind, a, b uint32) []uint32 {
	switch {
	case b >= absentMark || k == KindBool:
		return append(dst, a, b)
	case k == KindStrings:
		start := uint32(len(w.list) / 2)
		for e := a; e < a+b; e++ {
			off, l := pairAt(r.list, int(e))
			w.list = append(w.list, uint32(len(w.blob)), l)
			w.blob = append(w.blob, r.blob[off:off+l]...)
		}
		return append(dst, start, b)
	}
	off := uint32(len(w.blob))
	w.blob = append(w.blob, r.blob[a:a+b]...)
	return append(dst, off, b)
}

// SubsetOf reports whether to reads nothing from's frame does not hold:
// the same array, and each field and top member in from with its kind.
func SubsetOf(from, to Projection) error {
	if from.Array != to.Array {
		return fmt.Errorf("projection: array %q, the kept projection's is %q", to.Array, from.Array)
	}
	if _, err := positions(from.Fields, to.Fields); err != nil {
		return err
	}
	_, err := positions(from.Top, to.Top)
	return err
}

// positions is, for each of to, its index in from.
func positions(from, to []Field) ([]int, error) {
	at := make(map[string]int, len(from))
	for i, f := range from {
		at[f.Name] = i
	}
	out := make([]int, len(to))
	for j, f := range to {
		i, ok := at[f.Name]
		if !ok || from[i].Kind != f.Kind {
			return nil, fmt.Errorf("projection: %q is not in the kept projection with its kind", f.Name)
		}
		out[j] = i
	}
	return out, nil
}
