package projection

// JSON projection: the host decodes a JSON document natively and hands the
// plugin compact records holding only the fields it asked for, so bulk
// parsing stays out of the guest, where Go's JSON is 8–21× slower
// (hostabi/RATIONALE.md, "JSON projection"). The plugin keeps all knowledge
// of what the document means; the host only knows JSON.

// Kind is the JSON type a projected field must have. A value of another
// type fails the whole projection: a document without the shape the plugin
// expects is malformed, and is never used in part.
type Kind uint8

const (
	// KindString takes a JSON string (or null).
	KindString Kind = iota + 1
	// KindBool takes true or false (or null).
	KindBool
	// KindStrings takes an array of strings (or null).
	KindStrings
	// KindRaw takes any value and keeps its JSON text verbatim, for
	// numbers or small objects the plugin decodes itself.
	KindRaw
)

// Field is one member to extract from an object.
type Field struct {
	Name string
	Kind Kind
}

// Projection says what to extract from a document that is a JSON object:
// one record per element of the array under the top-level key Array (each
// element must be an object; Fields are read from it, in order), and the
// top-level members Top. With Array "" only Top is read. A missing Array
// key is an error. Members not asked for are validated and skipped.
type Projection struct {
	Array  string
	Fields []Field
	Top    []Field
}

// State tells a projected value apart from a missing or null one.
type State uint8

const (
	Absent State = iota // the member is not in the object
	Null                // the member is JSON null
	Set                 // the member has a value
)

// Records is a projected document. Accessors take a record index and the
// index of the field in Projection.Fields (Top accessors: the index in
// Projection.Top), and must match the field's kind (String also reads
// KindRaw); an index out of range or the wrong accessor panics like a bad
// slice index. All strings share one immutable buffer.
type Records struct {
	n, nf int
	slots []uint32 // n*nf pairs
	top   []uint32 // len(Top) pairs
	list  []uint32 // string-list entries: pairs (offset, length)
	blob  string
	slab  []string // every list entry, built on first use: one allocation, not one per list
}

// Len is the number of records (elements of the projected array).
func (r *Records) Len() int { return r.n }

// State reports whether field f of record i is absent, null or set.
func (r *Records) State(i, f int) State {
	_, b := r.slot(i, f)
	return stateOf(0, b)
}

// String returns field f of record i: "" if absent or null. For KindRaw
// fields it is the value's JSON text.
func (r *Records) String(i, f int) string {
	off, n := r.slot(i, f)
	if n >= absentMark {
		return ""
	}
	return r.blob[off : off+n]
}

// Bool returns field f of record i: false if absent or null.
func (r *Records) Bool(i, f int) bool {
	a, b := r.slot(i, f)
	return b == 0 && a == 1
}

// Strings returns field f of record i: nil if absent or null. The lists
// of one Records share a backing array; each has its own capacity, so an
// append to one never writes into another.
func (r *Records) Strings(i, f int) []string { return r.strs(r.slot(i, f)) }

// TopState reads the state of Projection.Top[k].
func (r *Records) TopState(k int) State { return stateOf(pairAt(r.top, k)) }

// TopString reads Projection.Top[k] as a string ("" if absent or null).
func (r *Records) TopString(k int) string {
	off, n := pairAt(r.top, k)
	if n >= absentMark {
		return ""
	}
	return r.blob[off : off+n]
}

// TopBool reads Projection.Top[k] as a bool (false if absent or null).
func (r *Records) TopBool(k int) bool { a, b := pairAt(r.top, k); return b == 0 && a == 1 }

// TopStrings reads Projection.Top[k] as a string list (nil if absent or null).
func (r *Records) TopStrings(k int) []string { return r.strs(pairAt(r.top, k)) }

// slot reads the pair of field f of record i. It is small enough to be
// inlined into every accessor: a guest maps thousands of records, and a
// call costs far more in Wasm than natively.
func (r *Records) slot(i, f int) (a, b uint32) {
	if uint(f) >= uint(r.nf) {
		panic("guest.Records: field index out of range")
	}
	k := 2 * (i*r.nf + f)
	return r.slots[k], r.slots[k+1] // panics for a record index out of range
}

func stateOf(_, b uint32) State {
	switch b {
	case absentMark:
		return Absent
	case nullMark:
		return Null
	}
	return Set
}

func (r *Records) strs(start, n uint32) []string {
	if n >= absentMark {
		return nil
	}
	if r.slab == nil {
		r.slab = make([]string, len(r.list)/2)
		for j := range r.slab {
			off, l := r.list[2*j], r.list[2*j+1]
			r.slab[j] = r.blob[off : off+l]
		}
	}
	return r.slab[start : start+n : start+n] // [] stays distinct from null
}
