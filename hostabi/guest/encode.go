package guest

import (
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/rpengine/rpengine/hostabi"
)

// appendListNodes encodes a list_nodes answer exactly as encoding/json
// would (same bytes: field order, omitempty, sorted map keys, escaping),
// without reflection. In a Go guest reflection-based encoding is ~10x
// slower than native and was most of a 10,000-node listing's cost
// (hostabi/RATIONALE.md). ok is false for what encoding/json refuses
// (NaN or infinite ratios); the caller then falls back to it.
func appendListNodes(b []byte, r hostabi.ListNodesResponse) (out []byte, ok bool) {
	b = append(b, '{')
	if r.Error.Error != "" {
		b = append(b, `"error":`...)
		b = appendString(b, r.Error.Error)
		b = append(b, ',')
	}
	b = append(b, `"nodes":`...)
	if r.Nodes == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range r.Nodes {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendNode(b, &r.Nodes[i]); !ok {
				return b, false
			}
		}
		b = append(b, ']')
	}
	b = append(b, `,"complete":`...)
	b = strconv.AppendBool(b, r.Complete)
	return append(b, '}'), true
}

func appendNode(b []byte, n *hostabi.Node) ([]byte, bool) {
	b = append(b, `{"uuid":`...)
	b = appendString(b, n.UUID)
	b = field(b, "name", n.Name)
	b = field(b, "resource_class", n.ResourceClass)
	if len(n.Resources) > 0 {
		b = append(b, `,"resources":{`...)
		keys := make([]string, 0, len(n.Resources))
		for k := range n.Resources {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(appendString(b, k), ':')
			var ok bool
			if b, ok = appendResource(b, n.Resources[k]); !ok {
				return b, false
			}
		}
		b = append(b, '}')
	}
	if len(n.Traits) > 0 {
		b = append(b, `,"traits":[`...)
		for i, t := range n.Traits {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, t)
		}
		b = append(b, ']')
	}
	b = field(b, "instance_uuid", n.InstanceUUID)
	b = flag(b, "maintenance", n.Maintenance)
	b = field(b, "power_state", n.PowerState)
	b = field(b, "provision_state", n.ProvisionState)
	b = field(b, "target_provision_state", n.TargetProvisionState)
	b = field(b, "fault", n.Fault)
	b = flag(b, "retired", n.Retired)
	b = field(b, "shard", n.Shard)
	b = field(b, "conductor_group", n.ConductorGroup)
	b = field(b, "owner", n.Owner)
	return append(appendProperties(b, n.Properties), '}'), true
}

// appendProperties writes a node's properties, keys sorted, as
// encoding/json writes a map.
func appendProperties(b []byte, props map[string]string) []byte {
	if len(props) == 0 {
		return b
	}
	b = append(b, `,"properties":{`...)
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(append(appendString(b, k), ':'), props[k])
	}
	return append(b, '}')
}

func appendResource(b []byte, r hostabi.Resource) ([]byte, bool) {
	b = append(b, `{"total":`...)
	b = strconv.AppendInt(b, r.Total, 10)
	for _, f := range []struct {
		name string
		v    int64
	}{{"reserved", r.Reserved}, {"min_unit", r.MinUnit}, {"max_unit", r.MaxUnit}, {"step_size", r.StepSize}} {
		if f.v != 0 {
			b = append(append(append(b, `,"`...), f.name...), `":`...)
			b = strconv.AppendInt(b, f.v, 10)
		}
	}
	if r.AllocationRatio != 0 {
		if math.IsNaN(r.AllocationRatio) || math.IsInf(r.AllocationRatio, 0) {
			return b, false
		}
		b = append(b, `,"allocation_ratio":`...)
		b = appendFloat(b, r.AllocationRatio)
	}
	return append(b, '}'), true
}

// appendFloat formats like encoding/json: 'f' for ordinary magnitudes,
// 'e' with a trimmed exponent for very small or large ones.
func appendFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

func field(b []byte, name, v string) []byte {
	if v == "" {
		return b
	}
	b = append(append(append(b, `,"`...), name...), `":`...)
	return appendString(b, v)
}

func flag(b []byte, name string, v bool) []byte {
	if !v {
		return b
	}
	return append(append(append(b, `,"`...), name...), `":true`...)
}

const hexDigits = "0123456789abcdef"

// appendString quotes s as encoding/json does, HTML escaping included.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
