package decoders

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
	"github.com/rpengine/rpengine/plugins/ironic/ironic"
)

// All maps a decoder's name to it. "jsontext" exists only in builds with
// GOEXPERIMENT=jsonv2.
var All = map[string]ironic.PageDecoder{
	"project":     ironic.ProjectPage,                        // host decodes (the plugin's choice)
	"guest-scan":  ironic.PageDecoderFor(guest.ProjectLocal), // the same scanner, in the caller
	"stdjson":     StdJSON,                                   // encoding/json, small struct
	"gophercloud": Gophercloud,                               // encoding/json into nodes.Node
}

// page is the smallest struct encoding/json can fill from a node page.
type page struct {
	Nodes []struct {
		UUID                 string   `json:"uuid"`
		Name                 *string  `json:"name"`
		ResourceClass        *string  `json:"resource_class"`
		ProvisionState       *string  `json:"provision_state"`
		TargetProvisionState *string  `json:"target_provision_state"`
		PowerState           *string  `json:"power_state"`
		Maintenance          bool     `json:"maintenance"`
		InstanceUUID         *string  `json:"instance_uuid"`
		ConductorGroup       string   `json:"conductor_group"`
		Shard                *string  `json:"shard"`
		Traits               []string `json:"traits"`
		Fault                *string  `json:"fault"`
		Retired              bool     `json:"retired"`
	} `json:"nodes"`
	Next string `json:"next"`
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// StdJSON decodes with encoding/json into page.
func StdJSON(body []byte) (ironic.Page, error) {
	var p page
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, err
	}
	out := make([]hostabi.Node, len(p.Nodes))
	for i, n := range p.Nodes {
		out[i] = hostabi.Node{UUID: n.UUID, Name: deref(n.Name), ResourceClass: deref(n.ResourceClass),
			ProvisionState: deref(n.ProvisionState), TargetProvisionState: deref(n.TargetProvisionState),
			PowerState: deref(n.PowerState), Maintenance: n.Maintenance, InstanceUUID: deref(n.InstanceUUID),
			ConductorGroup: n.ConductorGroup, Shard: deref(n.Shard), Traits: nonNil(n.Traits),
			Fault: deref(n.Fault), Retired: n.Retired}
	}
	return ironic.Nodes{List: out, Link: p.Next}, nil
}

// Gophercloud decodes into gophercloud's nodes.Node, as
// nodes.ExtractNodes would after its own extra passes.
func Gophercloud(body []byte) (ironic.Page, error) {
	var p struct {
		Nodes []nodes.Node `json:"nodes"`
		Next  string       `json:"next"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, err
	}
	out := make([]hostabi.Node, len(p.Nodes))
	for i, n := range p.Nodes {
		out[i] = hostabi.Node{UUID: n.UUID, Name: n.Name, ResourceClass: n.ResourceClass,
			ProvisionState: n.ProvisionState, TargetProvisionState: n.TargetProvisionState,
			PowerState: n.PowerState, Maintenance: n.Maintenance, InstanceUUID: n.InstanceUUID,
			ConductorGroup: n.ConductorGroup, Shard: n.Shard, Traits: nonNil(n.Traits),
			Fault: n.Fault, Retired: n.Retired}
	}
	return ironic.Nodes{List: out, Link: p.Next}, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Stages is the time Run spent in each stage.
type Stages struct{ Decode, Merge, Encode time.Duration }

// Run decodes every page with dec and merges them (ironic.MergePages), as
// one listing does, and with encode also encodes the result the way the
// guest SDK answers list_nodes. It returns the number of nodes and the
// time of each stage. Benchmarks run it natively and inside the bench
// guest, so both sides do exactly the same work.
func Run(bodies [][]byte, dec ironic.PageDecoder, encode bool) (int, Stages, error) {
	var st Stages
	t0 := time.Now()
	pages := make([]ironic.Page, 0, len(bodies))
	for i, b := range bodies {
		p, err := dec(b)
		if err != nil {
			return 0, st, fmt.Errorf("page %d: %w", i, err)
		}
		pages = append(pages, p)
	}
	t1 := time.Now()
	all, _, err := ironic.MergePages(pages)
	if err != nil {
		return 0, st, err
	}
	t2 := time.Now()
	if encode { // as the SDK answers a host that accepts binary records
		if _, ok := hostabi.AppendNodeRecords(make([]byte, 0, hostabi.NodeRecordsSize(all)), all); !ok {
			return 0, st, fmt.Errorf("nodes the binary records cannot hold")
		}
	}
	st = Stages{Decode: t1.Sub(t0), Merge: t2.Sub(t1), Encode: time.Since(t2)}
	return len(all), st, nil
}
