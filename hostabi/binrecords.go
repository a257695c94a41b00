package hostabi

import (
	"encoding/binary"
	"math"
	"slices"
)

// EncodingRecords names the binary encoding of listings (ABI.md §4,
// "Binary records"). The host offers it in a request's Accept; a plugin
// that understands it may answer a successful list_nodes or
// list_instances with it instead of JSON. An answer in it starts with
// RecordsMagic, which no JSON text can start with, so the host knows
// which one it got.
const EncodingRecords = "rpb1"

// RecordsMagic starts every answer in EncodingRecords.
const RecordsMagic = "RPB1"

// The kind byte after RecordsMagic: what the records are.
const (
	RecordsNodes     = 'N'
	RecordsInstances = 'I'
)

// Node flag bits in EncodingRecords; any other bit set is malformed.
const (
	FlagMaintenance = 1 << 0
	FlagRetired     = 1 << 1
)

// Accepts reports whether accept (a request's Accept) offers enc.
func Accepts(accept []string, enc string) bool { return slices.Contains(accept, enc) }

// AppendNodeRecords appends nodes in EncodingRecords to b:
//
//	"RPB1" 'N' count:uvarint, then count nodes, each:
//	  10 strings: uuid name resource_class instance_uuid power_state
//	    provision_state target_provision_state fault shard conductor_group
//	  flags:byte (FlagMaintenance, FlagRetired)
//	  ntraits:uvarint, ntraits strings
//	  nresources:uvarint, nresources of: name:string, total reserved
//	    min_unit max_unit step_size:varint (zig-zag), allocation_ratio:
//	    float64 little-endian
//
// A string is its byte length (uvarint) and its bytes, UTF-8; the host
// replaces each byte that is not valid UTF-8 with U+FFFD and marks the
// node, as it does when it decodes JSON, so the encoder need not look. Resources are written in
// sorted order of name. ok is false, and the caller must answer in JSON,
// for a ratio that is not finite (encoding/json refuses it) and for a
// node with an owner or properties, which rpb1 does not carry.
func AppendNodeRecords(b []byte, nodes []Node) (out []byte, ok bool) {
	b = append(b, RecordsMagic...)
	b = append(b, RecordsNodes)
	b = binary.AppendUvarint(b, uint64(len(nodes)))
	for i := range nodes {
		if b, ok = appendNodeRecord(b, &nodes[i]); !ok {
			return b, false
		}
	}
	return b, true
}

// NodeRecordsSize is the number of bytes AppendNodeRecords appends, so
// an encoder can size its buffer once (a guest pays for every byte it
// zeroes or copies again).
func NodeRecordsSize(nodes []Node) int {
	n := len(RecordsMagic) + 1 + uvarintLen(len(nodes))
	for i := range nodes {
		nd := &nodes[i]
		n += 1 + uvarintLen(len(nd.Traits)) + uvarintLen(len(nd.Resources))
		for _, s := range [...]string{nd.UUID, nd.Name, nd.ResourceClass, nd.InstanceUUID, nd.PowerState,
			nd.ProvisionState, nd.TargetProvisionState, nd.Fault, nd.Shard, nd.ConductorGroup} {
			n += uvarintLen(len(s)) + len(s)
		}
		for _, t := range nd.Traits {
			n += uvarintLen(len(t)) + len(t)
		}
		for k, r := range nd.Resources {
			n += uvarintLen(len(k)) + len(k) + 8
			for _, v := range [...]int64{r.Total, r.Reserved, r.MinUnit, r.MaxUnit, r.StepSize} {
				n += uvarintLen(int(uint64(v)<<1 ^ uint64(v>>63)))
			}
		}
	}
	return n
}

// uvarintLen is the length of v as a uvarint.
func uvarintLen(v int) int {
	n := 1
	for u := uint64(v); u >= 0x80; u >>= 7 {
		n++
	}
	return n
}

func appendNodeRecord(b []byte, n *Node) ([]byte, bool) {
	if n.Owner != "" || len(n.Properties) > 0 {
		return b, false
	}
	for _, s := range [...]string{n.UUID, n.Name, n.ResourceClass, n.InstanceUUID, n.PowerState,
		n.ProvisionState, n.TargetProvisionState, n.Fault, n.Shard, n.ConductorGroup} {
		b = appendRecordString(b, s)
	}
	var flags byte
	if n.Maintenance {
		flags |= FlagMaintenance
	}
	if n.Retired {
		flags |= FlagRetired
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, uint64(len(n.Traits)))
	for _, t := range n.Traits {
		b = appendRecordString(b, t)
	}
	b = binary.AppendUvarint(b, uint64(len(n.Resources)))
	if len(n.Resources) == 0 {
		return b, true
	}
	keys := make([]string, 0, len(n.Resources))
	for k := range n.Resources {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		r := n.Resources[k]
		if math.IsNaN(r.AllocationRatio) || math.IsInf(r.AllocationRatio, 0) {
			return b, false
		}
		b = appendRecordString(b, k)
		for _, v := range [...]int64{r.Total, r.Reserved, r.MinUnit, r.MaxUnit, r.StepSize} {
			b = binary.AppendVarint(b, v)
		}
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.AllocationRatio))
	}
	return b, true
}

// AppendInstanceRecords appends instances in EncodingRecords to b:
//
//	"RPB1" 'I' count:uvarint, then count of: uuid:string node_uuid:string
func AppendInstanceRecords(b []byte, instances []Instance) []byte {
	b = append(b, RecordsMagic...)
	b = append(b, RecordsInstances)
	b = binary.AppendUvarint(b, uint64(len(instances)))
	for _, in := range instances {
		b = appendRecordString(appendRecordString(b, in.UUID), in.NodeUUID)
	}
	return b
}

func appendRecordString(b []byte, s string) []byte {
	if len(s) < 0x80 { // the common case: one length byte
		return append(append(b, byte(len(s))), s...)
	}
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}
