package wasmhost

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"unicode/utf8"

	"github.com/rpengine/rpengine/hostabi"
)

// Answers in hostabi.EncodingRecords (ABI.md §4, "Binary records") are
// decoded here, under the same limits as JSON answers: every count is
// checked before anything is allocated for it, every string's length
// before it is read, and each record is charged to the answer's budget.
// So a hostile answer costs at most one bounded record before it is
// refused, and the error says what was wrong and where.

// recordReader reads one binary answer from the plugin. Each record is
// parsed in place from a window of the reader's buffer that holds the
// largest record the limits allow (or the rest of the answer), and only
// then consumed: no call per byte, no copy of a string before it becomes
// one.
type recordReader struct {
	r      *bufio.Reader
	lim    Limits
	budget int64
	cost   int64
	win    []byte // the current window, a view of r's buffer
	p      int    // what of win is read
	base   int64  // the answer's offset of win[0], for errors
	rec    int    // the record being read, for errors
	what   string // "node" or "instance"
	// last holds the previous record's value of each shared field (by
	// slot): neighbours in a listing mostly repeat their class, states,
	// scope and traits, which then cost a comparison, not a string.
	last [maxShared]string
	// own gathers a node's own strings (scratch, reused).
	own []byte
	// strs holds the nodes' own strings.
	strs stringSlab
	// cut: the window ends at maxWindow, not at the end of the answer.
	cut bool
	// bound is the largest record the limits allow: the window's size.
	bound int
	// bad is the first fault of the record being read against a
	// per-record limit: it marks the node, and the reader reads on.
	bad *hostabi.Invalid
}

// maxShared is the number of slots of recordReader.last: the node's
// shared string fields, then its traits and resources by position.
const maxShared = 16

// isRecords reports whether the answer waiting in r is in
// hostabi.EncodingRecords rather than JSON (which starts with '{' or
// white space, never 'R').
func isRecords(r *bufio.Reader) bool {
	b, err := r.Peek(1)
	return err == nil && b[0] == hostabi.RecordsMagic[0]
}

// recordBound is the most bytes one record can take within lim: every
// varint at its longest (10 bytes), every string and list at its limit.
func recordBound(lim Limits, kind byte) int {
	str := binary.MaxVarintLen64 + lim.MaxField
	if kind == hostabi.RecordsInstances {
		return 2 * str
	}
	resource := str + 5*binary.MaxVarintLen64 + 8
	return min(10*str+1+2*binary.MaxVarintLen64+lim.MaxTraits*(str+resource), maxWindow)
}

// maxWindow caps the window (and so the reader's buffer) whatever limits
// an operator sets: a record larger than it is refused. With the default
// limits the largest record is 32 KB.
const maxWindow = 4 << 20

func newRecordReader(r *bufio.Reader, lim Limits, budget int64, kind byte) (*recordReader, int, error) {
	lim = lim.withDefaults()
	bound := recordBound(lim, kind)
	rr := &recordReader{r: bufio.NewReaderSize(r, max(bound, 64<<10)), lim: lim, budget: budget, rec: -1, bound: bound}
	rr.what = map[byte]string{hostabi.RecordsNodes: "node", hostabi.RecordsInstances: "instance"}[kind]
	if err := rr.window(len(hostabi.RecordsMagic) + 1 + binary.MaxVarintLen64); err != nil {
		return nil, 0, err
	}
	if len(rr.win) < 5 || string(rr.win[:4]) != hostabi.RecordsMagic {
		return nil, 0, errors.New("binary answer: does not start with " + hostabi.RecordsMagic)
	}
	if rr.win[4] != kind {
		return nil, 0, fmt.Errorf("binary answer: holds records of kind %q, want %q", rr.win[4], kind)
	}
	rr.p = 5
	n, err := rr.uvarint("the record count")
	if err != nil {
		return nil, 0, err
	}
	if n > uint64(rr.lim.MaxRecords) {
		return nil, 0, &limitError{fmt.Sprintf("answer refused: it says it holds %d records, more than %d (plugin.max_records)", n, rr.lim.MaxRecords)}
	}
	if int64(n)*recordCost > budget {
		return nil, 0, &limitError{fmt.Sprintf("answer refused: its %d records would take more than %d MiB decoded (a quarter of plugin.memory_limit)", n, budget>>20)}
	}
	return rr, int(n), nil
}

// window consumes what was read and makes the next n bytes (fewer at
// the end of the answer) readable in place.
func (rr *recordReader) window(n int) error {
	rr.r.Discard(rr.p)
	rr.base += int64(rr.p)
	rr.p = 0
	w, err := rr.r.Peek(n)
	if err != nil && err != io.EOF { // the pipe broke
		return err
	}
	rr.win, rr.cut = w, len(w) == maxWindow
	return nil
}

// decodeNodeRecords reads a list_nodes answer in hostabi.EncodingRecords.
func decodeNodeRecords(r *bufio.Reader, lim Limits, budget int64) ([]hostabi.Node, error) {
	rr, n, err := newRecordReader(r, lim, budget, hostabi.RecordsNodes)
	if err != nil {
		return nil, err
	}
	nodes := make([]hostabi.Node, n)
	for i := range nodes {
		rr.rec, rr.bad = i, nil
		if err := rr.window(rr.bound); err != nil {
			return nil, err
		}
		if err := rr.node(&nodes[i]); err != nil {
			return nil, err
		}
		nodes[i].Invalid = rr.bad
	}
	return nodes, rr.end()
}

// decodeInstanceRecords reads a list_instances answer in
// hostabi.EncodingRecords.
func decodeInstanceRecords(r *bufio.Reader, lim Limits, budget int64) ([]hostabi.Instance, error) {
	rr, n, err := newRecordReader(r, lim, budget, hostabi.RecordsInstances)
	if err != nil {
		return nil, err
	}
	out := make([]hostabi.Instance, n)
	for i := range out {
		rr.rec = i
		if err := rr.window(rr.bound); err != nil {
			return nil, err
		}
		if out[i].UUID, err = rr.str("uuid", -1); err != nil {
			return nil, err
		}
		if out[i].NodeUUID, err = rr.str("node_uuid", -1); err != nil {
			return nil, err
		}
		if err := rr.charge(2); err != nil {
			return nil, err
		}
	}
	return out, rr.end()
}

func (rr *recordReader) node(n *hostabi.Node) error {
	// The node's own strings (uuid, name, instance) are cut together from
	// a slab shared with its neighbours (stringSlab), which nothing but
	// those nodes keeps.
	own, at := rr.own[:0], [4]int{}
	for i, dst := range [...]*string{&n.UUID, &n.Name, &n.ResourceClass, &n.InstanceUUID, &n.PowerState,
		&n.ProvisionState, &n.TargetProvisionState, &n.Fault, &n.Shard, &n.ConductorGroup} {
		if slot := nodeShared[i]; slot >= 0 {
			var err error
			if *dst, err = rr.str(nodeFields[i], slot); err != nil {
				return err
			}
			continue
		}
		b, err := rr.raw(nodeFields[i])
		if err != nil {
			return err
		}
		own = append(own, b...)
		at[min(i, 3)] = len(own) // uuid 0, name 1, instance 3: ends at at[0], at[1], at[3]
	}
	one := rr.strs.string(own)
	n.UUID, n.Name, n.InstanceUUID = one[:at[0]], one[at[0]:at[1]], one[at[1]:at[3]]
	rr.own = own
	flags, err := rr.readByte("flags")
	if err != nil {
		return err
	}
	if flags&^(hostabi.FlagMaintenance|hostabi.FlagRetired) != 0 {
		rr.mark(hostabi.InvalidValue, "flags 0x%02x has unknown bits set", flags)
	}
	n.Maintenance, n.Retired = flags&hostabi.FlagMaintenance != 0, flags&hostabi.FlagRetired != 0
	if err := rr.traits(n); err != nil {
		return err
	}
	nr, err := rr.count("resources")
	if err != nil {
		return err
	}
	if nr > 0 {
		n.Resources = make(map[string]hostabi.Resource, min(nr, rr.lim.MaxTraits))
		for range min(nr, rr.lim.MaxTraits) {
			if err := rr.resource(n.Resources); err != nil {
				return err
			}
		}
		if err := rr.skipEntries("resources", nr-min(nr, rr.lim.MaxTraits), true); err != nil {
			return err
		}
	}
	return rr.charge(12 + len(n.Traits) + 2*len(n.Resources))
}

// traits reads n's traits, keeping MaxTraits of them at most.
func (rr *recordReader) traits(n *hostabi.Node) error {
	nt, err := rr.count("traits")
	if err != nil || nt == 0 {
		return err
	}
	n.Traits = make([]string, min(nt, rr.lim.MaxTraits))
	for i := range n.Traits {
		if n.Traits[i], err = rr.str("traits", slotTraits+min(i, maxShared-1-slotTraits)); err != nil {
			return err
		}
	}
	return rr.skipEntries("traits", nt-len(n.Traits), false)
}

func (rr *recordReader) resource(into map[string]hostabi.Resource) error {
	name, err := rr.str("resources", maxShared-1)
	if err != nil {
		return err
	}
	if err := rr.refill(); err != nil {
		return err
	}
	if _, dup := into[name]; dup {
		rr.mark(hostabi.InvalidValue, "resource %q appears twice", Printable(name))
	}
	var v [5]int64
	for i, f := range [...]string{"total", "reserved", "min_unit", "max_unit", "step_size"} {
		if v[i], err = rr.varint(f); err != nil {
			return err
		}
	}
	if len(rr.win)-rr.p < 8 {
		return rr.short("allocation_ratio")
	}
	ratio := math.Float64frombits(binary.LittleEndian.Uint64(rr.win[rr.p:]))
	rr.p += 8
	if math.IsNaN(ratio) || math.IsInf(ratio, 0) {
		rr.mark(hostabi.InvalidValue, "resource %q has allocation_ratio %v, not a finite number", Printable(name), ratio)
		ratio = 1
	}
	into[name] = hostabi.Resource{Total: v[0], Reserved: v[1], MinUnit: v[2], MaxUnit: v[3], StepSize: v[4], AllocationRatio: ratio}
	return nil
}

// charge adds the record just read to the answer's decoded cost, as
// decodeList does for JSON: its bytes, its strings, its fixed size.
func (rr *recordReader) charge(strs int) error {
	rr.cost += int64(rr.p) + int64(strs)*stringCost + recordCost
	if rr.cost > rr.budget {
		return &limitError{fmt.Sprintf("answer refused: its records would take more than %d MiB decoded (a quarter of plugin.memory_limit)", rr.budget>>20)}
	}
	return nil
}

// end checks that nothing follows the last record.
func (rr *recordReader) end() error {
	if err := rr.window(1); err != nil {
		return err
	}
	if len(rr.win) > 0 {
		return fmt.Errorf("binary answer: data after the last record (byte %d)", rr.base)
	}
	return nil
}

// count reads the length of a node's list. Over MaxTraits, the node is
// marked and the entries past it are skipped (skipEntries), not kept.
func (rr *recordReader) count(field string) (int, error) {
	if err := rr.refill(); err != nil {
		return 0, err
	}
	n, err := rr.uvarint(field)
	if err != nil {
		return 0, err
	}
	if n > uint64(rr.lim.MaxTraits) {
		rr.mark(hostabi.InvalidTooManyEntries, "its \"%s\" holds %d entries, more than %d (plugin.max_traits)", field, n, rr.lim.MaxTraits)
		if n > math.MaxInt32 { // more than the answer can hold: it ends first
			n = math.MaxInt32
		}
	}
	return int(n), nil
}

// skipEntries reads past n entries of a list over MaxTraits, keeping
// nothing of them: traits are strings, resources a string and numbers.
func (rr *recordReader) skipEntries(field string, n int, resource bool) error {
	for range n {
		if err := rr.refill(); err != nil {
			return err
		}
		l, err := rr.uvarint(field)
		if err == nil {
			err = rr.skip(field, l)
		}
		if err == nil && resource {
			err = rr.refill()
			for i := 0; i < 5 && err == nil; i++ {
				_, err = rr.varint(field)
			}
			if err == nil && len(rr.win)-rr.p < 8 {
				err = rr.short(field)
			}
			rr.p += 8
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// refill makes sure the window holds the largest entry the limits allow
// (or the rest of the answer): once a record went past the limits, its
// rest may be longer than the window opened for it.
func (rr *recordReader) refill() error {
	entry := 3*(binary.MaxVarintLen64+rr.lim.MaxField) + 8
	if rr.bad == nil || len(rr.win)-rr.p >= entry {
		return nil
	}
	return rr.window(rr.bound)
}

// skip reads past n bytes without keeping them, beyond the window if need be.
func (rr *recordReader) skip(field string, n uint64) error {
	if avail := uint64(len(rr.win) - rr.p); n <= avail {
		rr.p += int(n)
		return nil
	}
	n -= uint64(len(rr.win) - rr.p)
	rr.p = len(rr.win)
	if err := rr.window(0); err != nil {
		return err
	}
	for n > 0 {
		d, err := rr.r.Discard(int(min(n, 1<<30)))
		rr.base, n = rr.base+int64(d), n-uint64(d)
		if err != nil {
			rr.cut = false
			return rr.short(field)
		}
	}
	return rr.window(rr.bound)
}

// mark records the first fault of the record being read.
func (rr *recordReader) mark(code, format string, args ...any) {
	if rr.bad == nil {
		rr.bad = &hostabi.Invalid{Code: code, Reason: fmt.Sprintf(format, args...)}
	}
}

// The node's string fields in their order in the encoding, and the slot
// of recordReader.last of each, -1 for those unique to a node.
var (
	nodeFields = [...]string{"uuid", "name", "resource_class", "instance_uuid", "power_state",
		"provision_state", "target_provision_state", "fault", "shard", "conductor_group"}
	nodeShared = [...]int{-1, -1, 0, -1, 1, 2, 3, 4, 5, 6}
)

// slotTraits is the first slot of recordReader.last for traits.
const slotTraits = 7

// str reads one string. A string equal to the last one read in slot
// (unless -1) is shared with it rather than allocated again.
func (rr *recordReader) str(field string, slot int) (string, error) {
	b, err := rr.raw(field)
	if err != nil || len(b) == 0 || slot < 0 {
		return string(b), err
	}
	if rr.last[slot] != string(b) {
		rr.last[slot] = string(b)
	}
	return rr.last[slot], nil
}

// raw reads one string's length and returns its bytes, in place, checked:
// at most MaxField, and UTF-8 (each byte that is not becomes U+FFFD, as
// encoding/json decodes it; then the bytes are a copy). A string over
// either marks the node; one too long keeps a copy of its first MaxField
// bytes and the rest is skipped unread.
func (rr *recordReader) raw(field string) ([]byte, error) {
	if err := rr.refill(); err != nil {
		return nil, err
	}
	n, err := rr.uvarint(field)
	if err != nil || n == 0 {
		return nil, err
	}
	if n > uint64(rr.lim.MaxField) {
		b := rr.win[rr.p:min(len(rr.win), rr.p+rr.lim.MaxField)]
		rr.mark(hostabi.InvalidFieldTooLong, "a string in \"%s\" is %d bytes, more than %d (plugin.max_field_length), starting \"%s\"",
			field, n, rr.lim.MaxField, Printable(string(b[:min(len(b), nameLen)])))
		b = validUTF8(b) // a copy: the window moves on
		return b, rr.skip(field, n)
	}
	if uint64(len(rr.win)-rr.p) < n {
		return nil, rr.short(field)
	}
	b := rr.win[rr.p : rr.p+int(n)]
	rr.p += int(n)
	if !utf8.Valid(b) {
		rr.mark(hostabi.InvalidUTF8, "a string in \"%s\" is not valid UTF-8", field)
		b = validUTF8(b)
	}
	return b, nil
}

// validUTF8 is b as encoding/json decodes a JSON string holding it:
// each byte that is not part of valid UTF-8 becomes U+FFFD.
func validUTF8(b []byte) []byte {
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return out
}

func (rr *recordReader) uvarint(field string) (uint64, error) {
	if rr.p < len(rr.win) && rr.win[rr.p] < 0x80 { // one byte: the common case
		rr.p++
		return uint64(rr.win[rr.p-1]), nil
	}
	v, n := binary.Uvarint(rr.win[rr.p:])
	return v, rr.advance(field, n)
}

func (rr *recordReader) varint(field string) (int64, error) {
	v, n := binary.Varint(rr.win[rr.p:])
	return v, rr.advance(field, n)
}

// advance moves past a varint of n bytes as binary.Uvarint reports it:
// 0 when the window ends inside it, negative when it overflows.
func (rr *recordReader) advance(field string, n int) error {
	switch {
	case n == 0:
		return rr.short(field)
	case n < 0:
		return rr.fail("the length or number in \"%s\" is malformed: it overflows 64 bits", field)
	}
	rr.p += n
	return nil
}

func (rr *recordReader) readByte(field string) (byte, error) {
	if rr.p >= len(rr.win) {
		return 0, rr.short(field)
	}
	rr.p++
	return rr.win[rr.p-1], nil
}

// at is the answer's offset being read.
func (rr *recordReader) at() int64 { return rr.base + int64(rr.p) }

// short is the error of a record cut off: the window holds the largest
// record the limits allow unless the answer ends first.
func (rr *recordReader) short(field string) error {
	if rr.cut {
		return rr.fail("a record longer than %d bytes, the most the host reads at once", maxWindow)
	}
	return rr.fail("the answer ends inside \"%s\"", field)
}

func (rr *recordReader) fail(format string, args ...any) error {
	where := "binary answer at byte " + fmt.Sprint(rr.at())
	if rr.rec >= 0 {
		where += fmt.Sprintf(", %s %d", rr.what, rr.rec)
	}
	return fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...))
}
