package hostabi

import "encoding/binary"

// EncodingRefs names answers by reference (ABI.md §4, "Answers by
// reference"): a list_nodes answer that names, for each node, a record of
// a projected response the host kept during the operation
// (HTTPRequestHead.Keep, HTTPResponseHead.Ref), and once which projected
// field fills which node field. The host builds the nodes from its own
// frames, under the same limits as any answer, so the records never cross
// back and the guest never encodes them. The host offers it in Accept;
// an answer in it starts with RefsMagic.
const EncodingRefs = "rpr1"

// RefsMagic starts every answer in EncodingRefs.
const RefsMagic = "RPR1"

// The node fields of NodeRefs.Fields, in the answer's order: the ten
// strings in EncodingRecords' order, the two flags, the traits.
const (
	RefUUID = iota
	RefName
	RefResourceClass
	RefInstanceUUID
	RefPowerState
	RefProvisionState
	RefTargetProvisionState
	RefFault
	RefShard
	RefConductorGroup
	RefMaintenance // a "bool" projected field
	RefRetired     // a "bool" projected field
	RefTraits      // a "strings" projected field
	RefFields      // how many
)

// NodeRefs is a list_nodes answer by reference.
type NodeRefs struct {
	// Fields holds, for each Ref* node field, the index of the projected
	// field (in the projection's Fields) that fills it, plus one; 0
	// leaves the node field unset. Every referenced frame must have been
	// projected with fields of the kinds these need.
	Fields [RefFields]uint32
	// Runs are the nodes, in order: runs of consecutive records.
	Runs []NodeRun
}

// NodeRun is Count consecutive records, from record First, of the kept
// projection Frame (an HTTPResponseHead.Ref).
type NodeRun struct {
	Frame, First, Count uint32
}

// Add appends record rec of frame to the nodes, extending the last run
// when it is the next record of the same frame.
func (r *NodeRefs) Add(frame, rec uint32) {
	if n := len(r.Runs); n > 0 {
		last := &r.Runs[n-1]
		if last.Frame == frame && last.First+last.Count == rec {
			last.Count++
			return
		}
	}
	r.Runs = append(r.Runs, NodeRun{Frame: frame, First: rec, Count: 1})
}

// AppendNodeRefs appends r in EncodingRefs to b:
//
//	"RPR1" 'N' nfields:uvarint field*nfields  nruns:uvarint run*nruns
//	field = projected field index + 1, or 0 (uvarint), in Ref* order
//	run   = frame:uvarint first:uvarint count:uvarint
func AppendNodeRefs(b []byte, r NodeRefs) []byte {
	b = append(b, RefsMagic...)
	b = append(b, RecordsNodes)
	b = binary.AppendUvarint(b, RefFields)
	for _, f := range r.Fields {
		b = binary.AppendUvarint(b, uint64(f))
	}
	b = binary.AppendUvarint(b, uint64(len(r.Runs)))
	for _, run := range r.Runs {
		b = binary.AppendUvarint(b, uint64(run.Frame))
		b = binary.AppendUvarint(b, uint64(run.First))
		b = binary.AppendUvarint(b, uint64(run.Count))
	}
	return b
}
