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
	intern map[string]string
}

// maxInterned bounds the table of repeated strings one answer shares
// (classes, states, traits): a hostile answer of distinct strings only
// stops sharing.
const maxInterned = 4096

// isRecords reports whether the answer waiting in r is in
// hostabi.EncodingRecords rather than JSON (which starts with '{' or
// white space, never 'R').
func isRecords(r *bufio.Reader) bool {
	b, err := r.Peek(1)
	return err == nil && b[0] == hostabi.RecordsMagic[0]
}

func newRecordReader(r *bufio.Reader, lim Limits, budget int64, kind byte) (*recordReader, int, error) {
	rr := &recordReader{r: r, lim: lim.withDefaults(), budget: budget, rec: -1, intern: map[string]string{}}
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
		if out[i].UUID, err = rr.str("uuid", false); err != nil {
			return nil, err
		}
		if out[i].NodeUUID, err = rr.str("node_uuid", false); err != nil {
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
	for _, f := range [...]struct {
		name   string
		dst    *string
		shared bool // a value many nodes repeat: interned
	}{
		{"uuid", &n.UUID, false}, {"name", &n.Name, false}, {"resource_class", &n.ResourceClass, true},
		{"instance_uuid", &n.InstanceUUID, false}, {"power_state", &n.PowerState, true},
		{"provision_state", &n.ProvisionState, true}, {"target_provision_state", &n.TargetProvisionState, true},
		{"fault", &n.Fault, true}, {"shard", &n.Shard, true}, {"conductor_group", &n.ConductorGroup, true},
	} {
		var err error
		if *f.dst, err = rr.str(f.name, f.shared); err != nil {
			return err
		}
	}
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
			if n.Traits[i], err = rr.str("traits", true); err != nil {
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
	name, err := rr.str("resources", true)
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

// str reads one string of at most MaxField bytes of valid UTF-8; shared
// ones come from the answer's intern table.
func (rr *recordReader) str(field string, shared bool) (string, error) {
	n, err := rr.uvarint(field)
	if err != nil || n == 0 {
		return "", err
	}
	if n > uint64(rr.lim.MaxField) {
		b, _ := rr.r.Peek(min(int(n), nameLen))
		return "", &limitError{fmt.Sprintf("answer refused at byte %d: a string in \"%s\" of %s %d is %d bytes, more than %d (plugin.max_field_length), starting \"%s\"",
			rr.off, field, rr.what, rr.rec, n, rr.lim.MaxField, Printable(string(b)))}
	}
	var b []byte
	if int(n) <= rr.r.Size() {
		b, err = rr.r.Peek(int(n)) // read in place: the common case
	} else { // plugin.max_field_length above the buffer
		b = make([]byte, n)
		_, err = io.ReadFull(rr.r, b)
		n = 0 // nothing left to discard
	}
	if err != nil {
		return "", rr.short(field)
	}
	if !utf8.Valid(b) {
		return "", rr.fail("the string in \"%s\" is not valid UTF-8: \"%s\"", field, Printable(string(b)))
	}
	var s string
	if shared {
		if s = rr.intern[string(b)]; s == "" {
			s = string(b)
			if len(rr.intern) < maxInterned {
				rr.intern[s] = s
			}
		}
	} else {
		s = string(b)
	}
	rr.r.Discard(int(n))
	rr.off += int64(len(b))
	return s, nil
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
