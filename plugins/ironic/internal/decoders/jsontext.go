//go:build goexperiment.jsonv2

package decoders

import (
	"bytes"
	"encoding/json/jsontext"
	"fmt"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/plugins/ironic/ironic"
)

func init() { All["jsontext"] = JSONText }

// JSONText decodes with encoding/json/jsontext tokens and hand mapping,
// skipping unwanted values with SkipValue.
func JSONText(body []byte) (ironic.Page, error) {
	nodes, next, err := jsonText(body)
	if err != nil {
		return nil, err
	}
	return ironic.Nodes{List: nodes, Link: next}, nil
}

func jsonText(body []byte) ([]hostabi.Node, string, error) {
	d := jsontext.NewDecoder(bytes.NewReader(body))
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, "", fmt.Errorf("not an object: %v", err)
	}
	var out []hostabi.Node
	var next string
	for d.PeekKind() != '}' {
		key, err := d.ReadToken()
		if err != nil {
			return nil, "", err
		}
		switch key.String() {
		case "nodes":
			if out, err = readNodes(d); err != nil {
				return nil, "", err
			}
		case "next":
			if next, err = str(d); err != nil {
				return nil, "", err
			}
		default:
			if err := d.SkipValue(); err != nil {
				return nil, "", err
			}
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return nil, "", err
	}
	return out, next, nil
}

func readNodes(d *jsontext.Decoder) ([]hostabi.Node, error) {
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '[' {
		return nil, fmt.Errorf("nodes is not an array: %v", err)
	}
	out := make([]hostabi.Node, 0, 1000)
	for d.PeekKind() != ']' {
		n, err := readNode(d)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	_, err := d.ReadToken()
	return out, err
}

func readNode(d *jsontext.Decoder) (hostabi.Node, error) {
	var n hostabi.Node
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return n, fmt.Errorf("node is not an object: %v", err)
	}
	for d.PeekKind() != '}' {
		key, err := d.ReadToken()
		if err != nil {
			return n, err
		}
		k := key.String()
		if s := stringField(&n, k); s != nil {
			if *s, err = str(d); err != nil {
				return n, err
			}
			continue
		}
		switch k {
		case "maintenance", "retired":
			tok, err := d.ReadToken()
			if err != nil {
				return n, err
			}
			b := tok.Kind() == 't'
			if k == "maintenance" {
				n.Maintenance = b
			} else {
				n.Retired = b
			}
		case "traits":
			if n.Traits, err = strs(d); err != nil {
				return n, err
			}
		default:
			if err := d.SkipValue(); err != nil {
				return n, err
			}
		}
	}
	_, err := d.ReadToken()
	return n, err
}

// stringField is n's string field named k, or nil.
func stringField(n *hostabi.Node, k string) *string {
	switch k {
	case "uuid":
		return &n.UUID
	case "name":
		return &n.Name
	case "resource_class":
		return &n.ResourceClass
	case "provision_state":
		return &n.ProvisionState
	case "target_provision_state":
		return &n.TargetProvisionState
	case "power_state":
		return &n.PowerState
	case "instance_uuid":
		return &n.InstanceUUID
	case "conductor_group":
		return &n.ConductorGroup
	case "shard":
		return &n.Shard
	case "fault":
		return &n.Fault
	}
	return nil
}

func str(d *jsontext.Decoder) (string, error) {
	tok, err := d.ReadToken()
	if err != nil || tok.Kind() == 'n' {
		return "", err
	}
	if tok.Kind() != '"' {
		return "", fmt.Errorf("want a string, got %v", tok.Kind())
	}
	return tok.String(), nil
}

func strs(d *jsontext.Decoder) ([]string, error) {
	tok, err := d.ReadToken()
	if err != nil || tok.Kind() == 'n' {
		return nil, err
	}
	out := []string{}
	for d.PeekKind() != ']' {
		s, err := str(d)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	_, err = d.ReadToken()
	return out, err
}
