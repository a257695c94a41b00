package wasmhost

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/projection"
)

// Answers by reference (ABI.md §4, hostabi.EncodingRefs): during a
// list_nodes call that offers them, the gate keeps the projections it
// made for requests that asked (Keep), and the plugin's answer names
// records of them instead of carrying nodes. The nodes are built here
// from the host's own frames, under the limits of any answer: a string
// over max_field_length, a list over max_traits or bytes that are not
// UTF-8 mark the node; a count over max_records or the memory budget, a
// frame or record the host does not hold, a field of the wrong kind, or
// anything malformed refuses the answer. What the plugin chooses is only
// which records and which fields; the values are the service's, as the
// host projected them.

// keptFrames are the projections kept for one operation, within budget.
type keptFrames struct {
	mu     sync.Mutex
	left   int64
	frames []keptFrame
}

type keptFrame struct {
	rec   projection.Records
	kinds []projection.Kind
}

// keptOverhead is what each kept frame is charged beyond its bytes, so
// that many tiny pages cannot make the list itself large.
const keptOverhead = 1 << 10

func newKeptFrames(budget int64) *keptFrames { return &keptFrames{left: budget} }

// add keeps frame (a status-0 projection frame by p, never written
// again) and returns its number, or 0 when over the budget: the plugin
// then answers with the nodes.
func (k *keptFrames) add(frame []byte, p projection.Projection) uint32 {
	k.mu.Lock()
	defer k.mu.Unlock()
	cost := int64(len(frame)) + keptOverhead
	if cost > k.left || len(k.frames) >= 1<<31 {
		return 0
	}
	rec, err := projection.ParseWire(frame)
	if err != nil {
		return 0
	}
	kinds := make([]projection.Kind, len(p.Fields))
	for i, f := range p.Fields {
		kinds[i] = f.Kind
	}
	k.left -= cost
	k.frames = append(k.frames, keptFrame{rec: rec, kinds: kinds})
	return uint32(len(k.frames))
}

// refKinds is the projected kind each node field must have.
var refKinds = [hostabi.RefFields]projection.Kind{
	projection.KindString, projection.KindString, projection.KindString, projection.KindString, projection.KindString,
	projection.KindString, projection.KindString, projection.KindString, projection.KindString, projection.KindString,
	hostabi.RefMaintenance: projection.KindBool, hostabi.RefRetired: projection.KindBool, hostabi.RefTraits: projection.KindStrings,
}

// maxRefsAnswer bounds the answer's own bytes: three varints per run, at
// most one run per record.
func maxRefsAnswer(lim Limits) int64 {
	return int64(len(hostabi.RefsMagic)+1+binary.MaxVarintLen64*(1+hostabi.RefFields+1)) + int64(lim.MaxRecords)*3*binary.MaxVarintLen64
}

// decodeNodeRefs reads a list_nodes answer in hostabi.EncodingRefs and
// builds its nodes from k's frames.
func decodeNodeRefs(r *bufio.Reader, lim Limits, budget int64, k *keptFrames) ([]hostabi.Node, error) {
	lim = lim.withDefaults()
	if k == nil {
		return nil, &limitError{fmt.Sprintf("answer refused: in %s, which the host did not offer", hostabi.EncodingRefs)}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	rd := &refReader{r: bufio.NewReader(io.LimitReader(r, maxRefsAnswer(lim)+1)), max: maxRefsAnswer(lim)}
	var head [5]byte
	if _, err := io.ReadFull(rd.r, head[:]); err != nil || string(head[:4]) != hostabi.RefsMagic {
		return nil, errors.New("answer by reference: does not start with " + hostabi.RefsMagic)
	}
	if head[4] != hostabi.RecordsNodes {
		return nil, fmt.Errorf("answer by reference: holds records of kind %q, want %q", head[4], hostabi.RecordsNodes)
	}
	var fields [hostabi.RefFields]uint32
	if n, err := rd.uvarint("the field count"); err != nil {
		return nil, err
	} else if n != hostabi.RefFields {
		return nil, rd.fail("it maps %d node fields, want %d", n, hostabi.RefFields)
	}
	for i := range fields {
		f, err := rd.uvarint("a field")
		if err != nil {
			return nil, err
		}
		if f > hostabi.MaxProjectFields {
			return nil, rd.fail("node field %d is projected field %d, more than a projection holds", i, f)
		}
		fields[i] = uint32(f)
	}
	runs, total, err := rd.runs(lim, budget, k, fields)
	if err != nil {
		return nil, err
	}
	if _, err := rd.r.ReadByte(); err != io.EOF {
		return nil, rd.fail("data after the last run")
	}
	return buildRefNodes(runs, total, lim, budget, k, fields)
}

// refReader reads the answer's varints, counting bytes for errors.
type refReader struct {
	r   *bufio.Reader
	at  int64
	max int64
}

func (rd *refReader) uvarint(what string) (uint64, error) {
	start := rd.at
	v, err := binary.ReadUvarint(byteCounter{rd})
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		if rd.at > rd.max {
			return 0, &limitError{fmt.Sprintf("answer refused: an answer by reference is longer than %d bytes, the most %d records take", rd.max, rd.max/(3*binary.MaxVarintLen64))}
		}
		return 0, fmt.Errorf("answer by reference at byte %d: the answer ends inside %s", start, what)
	case err != nil:
		return 0, fmt.Errorf("answer by reference at byte %d: %s is malformed: %v", start, what, err)
	}
	return v, nil
}

func (rd *refReader) fail(format string, args ...any) error {
	return fmt.Errorf("answer by reference at byte %d: %s", rd.at, fmt.Sprintf(format, args...))
}

type byteCounter struct{ rd *refReader }

func (b byteCounter) ReadByte() (byte, error) {
	c, err := b.rd.r.ReadByte()
	if err == nil {
		b.rd.at++
	}
	return c, err
}

// runs reads the runs, checking each against the frames it names and the
// answer's limits before any node is built.
func (rd *refReader) runs(lim Limits, budget int64, k *keptFrames, fields [hostabi.RefFields]uint32) ([]hostabi.NodeRun, int, error) {
	n, err := rd.uvarint("the run count")
	if err != nil {
		return nil, 0, err
	}
	if n > uint64(lim.MaxRecords) {
		return nil, 0, &limitError{fmt.Sprintf("answer refused: it says it holds %d runs, more than %d records (plugin.max_records)", n, lim.MaxRecords)}
	}
	runs := make([]hostabi.NodeRun, 0, n)
	checked := make([]bool, len(k.frames))
	total := uint64(0)
	for range n {
		var v [3]uint64
		for j, what := range [...]string{"a run's frame", "a run's first record", "a run's count"} {
			if v[j], err = rd.uvarint(what); err != nil {
				return nil, 0, err
			}
		}
		if v[0] == 0 || v[0] > uint64(len(k.frames)) {
			return nil, 0, rd.fail("a run names frame %d; the host kept %d for this call", v[0], len(k.frames))
		}
		f := &k.frames[v[0]-1]
		if v[1] > uint64(f.rec.Len()) || v[2] > uint64(f.rec.Len())-v[1] {
			return nil, 0, rd.fail("a run names records %d+%d of frame %d, which holds %d", v[1], v[2], v[0], f.rec.Len())
		}
		if !checked[v[0]-1] {
			if err := checkRefKinds(fields, f.kinds); err != nil {
				return nil, 0, rd.fail("frame %d: %v", v[0], err)
			}
			checked[v[0]-1] = true
		}
		if total += v[2]; total > uint64(lim.MaxRecords) {
			return nil, 0, &limitError{fmt.Sprintf("answer refused: it names more than %d records (plugin.max_records)", lim.MaxRecords)}
		}
		if int64(total)*recordCost > budget {
			return nil, 0, &limitError{fmt.Sprintf("answer refused: its %d records would take more than %d MiB decoded (a quarter of plugin.memory_limit)", total, budget>>20)}
		}
		runs = append(runs, hostabi.NodeRun{Frame: uint32(v[0]), First: uint32(v[1]), Count: uint32(v[2])})
	}
	return runs, int(total), nil
}

// checkRefKinds refuses a field map that reads a field of a frame with
// the wrong kind, or one the frame does not have.
func checkRefKinds(fields [hostabi.RefFields]uint32, kinds []projection.Kind) error {
	for i, f := range fields {
		if f == 0 {
			continue
		}
		if int(f) > len(kinds) {
			return fmt.Errorf("node field %d is projected field %d; the frame has %d", i, f, len(kinds))
		}
		if kinds[f-1] != refKinds[i] {
			return fmt.Errorf("node field %d is projected field %d, of kind %d, not %d", i, f, kinds[f-1], refKinds[i])
		}
	}
	return nil
}

// buildRefNodes builds the nodes the runs name, checking each value
// against the per-node limits as the binary decoder does (and sharing
// strings the same way: nodes' own strings cut from shared slabs, their
// neighbours' repeated class, states and traits not allocated again), so
// that nothing of the frames stays referenced once the nodes are built.
func buildRefNodes(runs []hostabi.NodeRun, total int, lim Limits, budget int64, k *keptFrames, fields [hostabi.RefFields]uint32) ([]hostabi.Node, error) {
	nodes := make([]hostabi.Node, total)
	b := refBuilder{lim: lim}
	cost, at := int64(0), 0
	for _, run := range runs {
		rec := &k.frames[run.Frame-1].rec
		for i := int(run.First); i < int(run.First+run.Count); i++ {
			n := &nodes[at]
			at++
			strs := b.node(n, rec, i, fields)
			cost += int64(b.bytes) + int64(strs)*stringCost + recordCost
			if cost > budget {
				return nil, &limitError{fmt.Sprintf("answer refused: its records would take more than %d MiB decoded (a quarter of plugin.memory_limit)", budget>>20)}
			}
		}
	}
	return nodes, nil
}

// refBuilder builds nodes from frame records (scratch reused across them).
type refBuilder struct {
	lim Limits
	// recent holds, per slot, the last distinct values taken there (each
	// a copy, never an alias of a frame): a fleet's classes, states,
	// shards and traits are few, so most values cost a comparison.
	recent [maxShared][recentValues]string
	next   [maxShared]uint8
	own    []byte
	strs   stringSlab // the nodes' own strings
	slab   []string   // traits of the nodes: one allocation for many
	bad    *hostabi.Invalid
	bytes  int // the node's value bytes, for its cost
}

// recentValues is how many distinct values refBuilder.recent keeps per slot.
const recentValues = 8

// node builds record i of rec into n and returns its string count.
func (b *refBuilder) node(n *hostabi.Node, rec *projection.Records, i int, fields [hostabi.RefFields]uint32) int {
	b.bad, b.bytes = nil, 0
	own, at := b.own[:0], [4]int{}
	for f, dst := range [...]*string{&n.UUID, &n.Name, &n.ResourceClass, &n.InstanceUUID, &n.PowerState,
		&n.ProvisionState, &n.TargetProvisionState, &n.Fault, &n.Shard, &n.ConductorGroup} {
		var s string
		if fields[f] != 0 {
			s = rec.String(i, int(fields[f]-1))
		}
		if slot := nodeShared[f]; slot >= 0 {
			*dst = b.shared(nodeFields[f], s, slot)
			continue
		}
		own = append(own, b.checked(nodeFields[f], s)...)
		at[min(f, 3)] = len(own) // uuid 0, name 1, instance 3
	}
	one := b.strs.string(own)
	n.UUID, n.Name, n.InstanceUUID = one[:at[0]], one[at[0]:at[1]], one[at[1]:at[3]]
	b.own = own
	if f := fields[hostabi.RefMaintenance]; f != 0 {
		n.Maintenance = rec.Bool(i, int(f-1))
	}
	if f := fields[hostabi.RefRetired]; f != 0 {
		n.Retired = rec.Bool(i, int(f-1))
	}
	if f := fields[hostabi.RefTraits]; f != 0 {
		if list := rec.Strings(i, int(f-1)); len(list) > 0 {
			if len(list) > b.lim.MaxTraits {
				b.mark(hostabi.InvalidTooManyEntries, "its \"traits\" holds %d entries, more than %d (plugin.max_traits)", len(list), b.lim.MaxTraits)
				list = list[:b.lim.MaxTraits]
			}
			if len(b.slab) < len(list) {
				b.slab = make([]string, max(len(list), 1024))
			}
			n.Traits, b.slab = b.slab[:len(list):len(list)], b.slab[len(list):]
			for j, t := range list {
				n.Traits[j] = b.shared("traits", t, slotTraits+min(j, maxShared-1-slotTraits))
			}
		}
	}
	n.Invalid = b.bad
	return 12 + len(n.Traits)
}

// checked is s within the limits, as the binary decoder reads a string:
// over MaxField it is cut there and marks the node, bytes that are not
// UTF-8 become U+FFFD and mark it. The result may alias s.
func (b *refBuilder) checked(field, s string) string {
	b.bytes += len(s)
	if len(s) > b.lim.MaxField {
		b.mark(hostabi.InvalidFieldTooLong, "a string in \"%s\" is %d bytes, more than %d (plugin.max_field_length), starting \"%s\"",
			field, len(s), b.lim.MaxField, Printable(s[:min(len(s), nameLen)]))
		return string(validUTF8([]byte(s[:b.lim.MaxField])))
	}
	if !utf8.ValidString(s) {
		b.mark(hostabi.InvalidUTF8, "a string in \"%s\" is not valid UTF-8", field)
		return string(validUTF8([]byte(s)))
	}
	return s
}

// shared is s checked, shared with an equal recent value of slot rather
// than allocated again; never an alias of the frame.
func (b *refBuilder) shared(field, s string, slot int) string {
	if s == "" {
		return ""
	}
	for _, v := range &b.recent[slot] {
		if v == s { // a recent value was checked: so is s
			b.bytes += len(s)
			return v
		}
	}
	v := b.checked(field, s)
	for _, r := range &b.recent[slot] {
		if r == v {
			return r
		}
	}
	v = strings.Clone(v)
	b.recent[slot][b.next[slot]] = v
	b.next[slot] = (b.next[slot] + 1) % recentValues
	return v
}

func (b *refBuilder) mark(code, format string, args ...any) {
	if b.bad == nil {
		b.bad = &hostabi.Invalid{Code: code, Reason: fmt.Sprintf(format, args...)}
	}
}
