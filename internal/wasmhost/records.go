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

// recordReader reads one binary answer from the plugin.
type recordReader struct {
	r      *bufio.Reader
	lim    Limits
	budget int64
	cost   int64
	off    int64  // bytes consumed, for errors
	rec    int    // the record being read, for errors
	what   string // "node" or "instance"
	// last holds the previous record's value of each shared field (by
	// slot): neighbours in a listing mostly repeat their class, states,
	// scope and traits, which then cost a comparison, not a string.
	last [maxShared]string
	// uniq gathers a node's own strings (scratch, reused).
	uniq []byte
	// pending is what the last raw view holds of the reader's buffer,
	// taken the bytes of the answer it stands for.
	pending int
	taken   int64
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

func newRecordReader(r *bufio.Reader, lim Limits, budget int64, kind byte) (*recordReader, int, error) {
	rr := &recordReader{r: r, lim: lim.withDefaults(), budget: budget, rec: -1}
	rr.what = map[byte]string{hostabi.RecordsNodes: "node", hostabi.RecordsInstances: "instance"}[kind]
	var head [len(hostabi.RecordsMagic) + 1]byte
	if _, err := io.ReadFull(r, head[:]); err != nil || string(head[:4]) != hostabi.RecordsMagic {
		return nil, 0, errors.New("binary answer: does not start with " + hostabi.RecordsMagic)
	}
	rr.off = int64(len(head))
	if head[4] != kind {
		return nil, 0, fmt.Errorf("binary answer: holds records of kind %q, want %q", head[4], kind)
	}
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

// decodeNodeRecords reads a list_nodes answer in hostabi.EncodingRecords.
func decodeNodeRecords(r *bufio.Reader, lim Limits, budget int64) ([]hostabi.Node, error) {
	rr, n, err := newRecordReader(r, lim, budget, hostabi.RecordsNodes)
	if err != nil {
		return nil, err
	}
	nodes := make([]hostabi.Node, n)
	for i := range nodes {
		rr.rec = i
		if err := rr.node(&nodes[i]); err != nil {
			return nil, err
		}
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
		start := rr.off
		var err error
		if out[i].UUID, err = rr.str("uuid", -1); err != nil {
			return nil, err
		}
		if out[i].NodeUUID, err = rr.str("node_uuid", -1); err != nil {
			return nil, err
		}
		if err := rr.charge(start, 2); err != nil {
			return nil, err
		}
	}
	return out, rr.end()
}

func (rr *recordReader) node(n *hostabi.Node) error {
	start := rr.off
	var err error
	// The node's own strings (uuid, name, instance) share one allocation,
	// which nothing but the node keeps: a third of the allocations.
	own, at := rr.uniq[:0], [4]int{}
	for i, dst := range [...]*string{&n.UUID, &n.Name, &n.ResourceClass, &n.InstanceUUID, &n.PowerState,
		&n.ProvisionState, &n.TargetProvisionState, &n.Fault, &n.Shard, &n.ConductorGroup} {
		if slot := nodeShared[i]; slot >= 0 {
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
		rr.consume()
		at[min(i, 3)] = len(own) // uuid 0, name 1, instance 3: ends at at[0], at[1], at[3]
	}
	one := string(own)
	n.UUID, n.Name, n.InstanceUUID = one[:at[0]], one[at[0]:at[1]], one[at[1]:at[3]]
	rr.uniq = own
	flags, err := rr.readByte("flags")
	if err != nil {
		return err
	}
	if flags&^(hostabi.FlagMaintenance|hostabi.FlagRetired) != 0 {
		return rr.fail("flags 0x%02x has unknown bits set", flags)
	}
	n.Maintenance, n.Retired = flags&hostabi.FlagMaintenance != 0, flags&hostabi.FlagRetired != 0
	strs := 12
	nt, err := rr.count("traits")
	if err != nil {
		return err
	}
	if nt > 0 {
		n.Traits = make([]string, nt)
		for i := range n.Traits {
			if n.Traits[i], err = rr.str("traits", slotTraits+min(i, maxShared-1-slotTraits)); err != nil {
				return err
			}
		}
	}
	nr, err := rr.count("resources")
	if err != nil {
		return err
	}
	if nr > 0 {
		n.Resources = make(map[string]hostabi.Resource, nr)
		for range nr {
			if err := rr.resource(n.Resources); err != nil {
				return err
			}
		}
	}
	return rr.charge(start, strs+nt+2*nr)
}

func (rr *recordReader) resource(into map[string]hostabi.Resource) error {
	name, err := rr.str("resources", maxShared-1)
	if err != nil {
		return err
	}
	if _, dup := into[name]; dup {
		return rr.fail("resource %q appears twice", Printable(name))
	}
	var v [5]int64
	for i, f := range [...]string{"total", "reserved", "min_unit", "max_unit", "step_size"} {
		if v[i], err = rr.varint(f); err != nil {
			return err
		}
	}
	var raw [8]byte
	if err := rr.full(raw[:], "allocation_ratio"); err != nil {
		return err
	}
	ratio := math.Float64frombits(binary.LittleEndian.Uint64(raw[:]))
	if math.IsNaN(ratio) || math.IsInf(ratio, 0) {
		return rr.fail("resource %q has allocation_ratio %v, not a finite number", Printable(name), ratio)
	}
	into[name] = hostabi.Resource{Total: v[0], Reserved: v[1], MinUnit: v[2], MaxUnit: v[3], StepSize: v[4], AllocationRatio: ratio}
	return nil
}

// charge adds a record to the answer's decoded cost, as decodeList does
// for JSON: its bytes, its strings, its fixed size.
func (rr *recordReader) charge(start int64, strs int) error {
	rr.cost += rr.off - start + int64(strs)*stringCost + recordCost
	if rr.cost > rr.budget {
		return &limitError{fmt.Sprintf("answer refused: its records would take more than %d MiB decoded (a quarter of plugin.memory_limit)", rr.budget>>20)}
	}
	return nil
}

// end checks that nothing follows the last record.
func (rr *recordReader) end() error {
	if _, err := rr.r.ReadByte(); err != io.EOF {
		return fmt.Errorf("binary answer: data after the last record (byte %d)", rr.off)
	}
	return nil
}

// count reads the length of a node's list, at most MaxTraits.
func (rr *recordReader) count(field string) (int, error) {
	n, err := rr.uvarint(field)
	if err != nil {
		return 0, err
	}
	if n > uint64(rr.lim.MaxTraits) {
		return 0, &limitError{fmt.Sprintf("answer refused at byte %d: %s %d's \"%s\" holds %d entries, more than %d (plugin.max_traits)", rr.off, rr.what, rr.rec, field, n, rr.lim.MaxTraits)}
	}
	return int(n), nil
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

// str reads one string of at most MaxField bytes of valid UTF-8. A
// string equal to the last one read in slot (unless -1) is shared with
// it rather than allocated again.
func (rr *recordReader) str(field string, slot int) (string, error) {
	b, err := rr.raw(field)
	if err != nil || len(b) == 0 {
		return "", err
	}
	var s string
	switch {
	case slot < 0:
		s = string(b)
	case rr.last[slot] == string(b):
		s = rr.last[slot]
	default:
		s = string(b)
		rr.last[slot] = s
	}
	rr.consume()
	return s, nil
}

// raw reads one string's length and returns a view of its bytes, checked
// (at most MaxField, valid UTF-8); the caller uses it, then consumes it.
func (rr *recordReader) raw(field string) ([]byte, error) {
	var n uint64
	c, err := rr.r.Peek(1)
	if err == nil && c[0] < 0x80 { // a one-byte length: the common case
		n = uint64(c[0])
		rr.r.Discard(1)
		rr.off++
	} else if n, err = rr.uvarint(field); err != nil {
		return nil, err
	}
	rr.pending, rr.taken = 0, 0
	if n == 0 {
		return nil, nil
	}
	if n > uint64(rr.lim.MaxField) {
		b, _ := rr.r.Peek(min(int(n), nameLen))
		return nil, &limitError{fmt.Sprintf("answer refused at byte %d: a string in \"%s\" of %s %d is %d bytes, more than %d (plugin.max_field_length), starting \"%s\"",
			rr.off, field, rr.what, rr.rec, n, rr.lim.MaxField, Printable(string(b)))}
	}
	var b []byte
	if int(n) <= rr.r.Size() {
		b, err = rr.r.Peek(int(n)) // read in place: the common case
		rr.pending = int(n)
	} else { // plugin.max_field_length above the buffer
		b = make([]byte, n)
		_, err = io.ReadFull(rr.r, b)
	}
	if err != nil {
		return nil, rr.short(field)
	}
	rr.taken = int64(n)
	if !utf8.Valid(b) {
		b = validUTF8(b)
	}
	return b, nil
}

// consume moves past the string raw returned.
func (rr *recordReader) consume() {
	rr.r.Discard(rr.pending)
	rr.off += rr.taken
	rr.pending, rr.taken = 0, 0
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
	v, err := binary.ReadUvarint(rr)
	if err != nil {
		return 0, rr.bad(field, err)
	}
	return v, nil
}

func (rr *recordReader) varint(field string) (int64, error) {
	v, err := binary.ReadVarint(rr)
	if err != nil {
		return 0, rr.bad(field, err)
	}
	return v, nil
}

func (rr *recordReader) readByte(field string) (byte, error) {
	c, err := rr.ReadByte()
	if err != nil {
		return 0, rr.short(field)
	}
	return c, nil
}

func (rr *recordReader) full(b []byte, field string) error {
	n, err := io.ReadFull(rr.r, b)
	rr.off += int64(n)
	if err != nil {
		return rr.short(field)
	}
	return nil
}

// ReadByte makes rr an io.ByteReader that counts what it consumed.
func (rr *recordReader) ReadByte() (byte, error) {
	c, err := rr.r.ReadByte()
	if err == nil {
		rr.off++
	}
	return c, err
}

func (rr *recordReader) bad(field string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return rr.short(field)
	}
	return rr.fail("the length or number in \"%s\" is malformed: %v", field, err)
}

func (rr *recordReader) short(field string) error {
	return rr.fail("the answer ends inside \"%s\"", field)
}

func (rr *recordReader) fail(format string, args ...any) error {
	where := "binary answer at byte " + fmt.Sprint(rr.off)
	if rr.rec >= 0 {
		where += fmt.Sprintf(", %s %d", rr.what, rr.rec)
	}
	return fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...))
}
