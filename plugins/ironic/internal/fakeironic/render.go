package fakeironic

import (
	"encoding/json"
	"strconv"
)

// fieldSince is the microversion each servable field appeared in (minor).
var fieldSince = map[string]int{
	"uuid": 1, "name": 5, "resource_class": 21, "provision_state": 1, "target_provision_state": 1,
	"power_state": 1, "maintenance": 1, "instance_uuid": 1, "conductor_group": 46, "shard": 82,
	"traits": 37, "fault": 42, "retired": 61, "owner": 50, "properties": 1, "extra": 1,
}

// appendNode writes a node as Ironic does with fields=: the fields in the
// order asked, then links, with Python's ", " and ": " separators.
func appendNode(b []byte, n *Node, fields []string, base string) []byte {
	b = append(b, '{')
	for _, f := range fields {
		b = append(appendString(b, f), ": "...)
		switch f {
		case "uuid":
			b = appendString(b, n.UUID)
		case "name":
			b = appendNullable(b, n.Name)
		case "resource_class":
			b = appendNullable(b, n.ResourceClass)
		case "provision_state":
			b = appendNullable(b, n.ProvisionState)
		case "target_provision_state":
			b = appendNullable(b, n.TargetProvisionState)
		case "power_state":
			b = appendNullable(b, n.PowerState)
		case "maintenance":
			b = strconv.AppendBool(b, n.Maintenance)
		case "instance_uuid":
			b = appendNullable(b, n.InstanceUUID)
		case "conductor_group":
			b = appendString(b, n.ConductorGroup)
		case "shard":
			b = appendNullable(b, n.Shard)
		case "traits":
			b = append(b, '[')
			for i, t := range n.Traits {
				if i > 0 {
					b = append(b, ", "...)
				}
				b = appendString(b, t)
			}
			b = append(b, ']')
		case "fault":
			b = appendNullable(b, n.Fault)
		case "retired":
			b = strconv.AppendBool(b, n.Retired)
		case "owner":
			b = appendNullable(b, n.Owner)
		case "properties":
			b = appendObject(b, n.Properties)
		case "extra":
			b = appendObject(b, n.Extra)
		case "updated_at":
			b = appendNullable(b, n.UpdatedAt)
		}
		b = append(b, ", "...)
	}
	b = append(b, `"links": [{"href": "`...)
	b = append(b, base...)
	b = append(b, "/v1/nodes/"...)
	b = append(b, n.UUID...)
	b = append(b, `", "rel": "self"}, {"href": "`...)
	b = append(b, base...)
	b = append(b, "/nodes/"...)
	b = append(b, n.UUID...)
	return append(b, `", "rel": "bookmark"}]}`...)
}

func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}

func appendObject(b []byte, m map[string]any) []byte {
	if m == nil {
		return append(b, "{}"...)
	}
	o, _ := json.Marshal(m)
	return append(b, o...)
}

func appendNullable(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return appendString(b, s)
}

// errorBody is Ironic's error shape: JSON nested in a string.
func errorBody(faultstring string) []byte {
	inner, _ := json.Marshal(map[string]any{"faultcode": "Client", "faultstring": faultstring, "debuginfo": nil})
	outer, _ := json.Marshal(map[string]string{"error_message": string(inner)})
	return outer
}

// versionErrorBody is the other shape, from the microversion check.
func versionErrorBody(description string) []byte {
	inner, _ := json.Marshal(map[string]any{"code": 406, "title": "Not Acceptable", "description": description})
	outer, _ := json.Marshal(map[string]string{"error_message": string(inner)})
	return outer
}
