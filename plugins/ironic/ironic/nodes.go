package ironic

import (
	"errors"
	"fmt"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
)

// Page is one decoded page of a node listing.
type Page interface {
	// Len is the number of nodes on the page.
	Len() int
	// Next is the page's next link, "" if none.
	Next() string
	// UUID is the uuid of node i ("" if it has none).
	UUID(i int) string
	// Fill writes the page's nodes to dst, len(dst) == Len(). It fails
	// on a node the engine cannot use at all (no uuid).
	Fill(dst []hostabi.Node) error
}

// PageDecoder decodes the body of one GET /v1/nodes page. It fails on any
// body that is not a node page: a page is used whole or not at all.
type PageDecoder func(body []byte) (Page, error)

// The node fields, as indexes into nodePage.Fields.
const (
	fUUID = iota
	fName
	fResourceClass
	fProvisionState
	fTargetProvisionState
	fPowerState
	fMaintenance
	fInstanceUUID
	fConductorGroup
	fShard
	fTraits
	fFault
	fRetired
)

// nodePage is what the host extracts from a page: the node fields the
// engine needs (null reads as "" or false) and the next link; links,
// properties and anything else are skipped natively.
var nodePage = guest.Projection{
	Array: "nodes",
	Fields: []guest.Field{
		fUUID:                 {Name: "uuid", Kind: guest.KindString},
		fName:                 {Name: "name", Kind: guest.KindString},
		fResourceClass:        {Name: "resource_class", Kind: guest.KindString},
		fProvisionState:       {Name: "provision_state", Kind: guest.KindString},
		fTargetProvisionState: {Name: "target_provision_state", Kind: guest.KindString},
		fPowerState:           {Name: "power_state", Kind: guest.KindString},
		fMaintenance:          {Name: "maintenance", Kind: guest.KindBool},
		fInstanceUUID:         {Name: "instance_uuid", Kind: guest.KindString},
		fConductorGroup:       {Name: "conductor_group", Kind: guest.KindString},
		fShard:                {Name: "shard", Kind: guest.KindString},
		fTraits:               {Name: "traits", Kind: guest.KindStrings},
		fFault:                {Name: "fault", Kind: guest.KindString},
		fRetired:              {Name: "retired", Kind: guest.KindBool},
	},
	Top: []guest.Field{{Name: "next", Kind: guest.KindString}},
}

// ProjectPage is the default PageDecoder: the host parses the page
// natively (guest.Project) into compact records, and the plugin only
// copies fields into nodes, once, straight into the listing's result.
var ProjectPage = PageDecoderFor(guest.Project)

// PageDecoderFor returns a PageDecoder that projects a page with project
// (benchmarks pass guest.ProjectLocal).
func PageDecoderFor(project func([]byte, guest.Projection) (guest.Records, error)) PageDecoder {
	return func(body []byte) (Page, error) {
		r, err := project(body, nodePage)
		if err != nil {
			return nil, err
		}
		return projected{r: r}, nil
	}
}

// projected is a page the host projected; ref is its number for the
// projection it kept (guest.HTTPResponse.Ref), 0 if none; part: r is
// uuidPage's projection (the host kept nodePage's), not nodePage's.
type projected struct {
	r    guest.Records
	ref  uint32
	part bool
	w    *want // the optional fields asked, nil if none
}

// uuidPage is what a plugin answering by reference reads of a page: the
// uuids (fUUID is 0 in both) and the next link; the host keeps nodePage.
var uuidPage = guest.Projection{Array: nodePage.Array, Fields: nodePage.Fields[:fUUID+1], Top: nodePage.Top}

// nodeRefFields is nodePage's field for each node field, as an answer
// by reference names them (hostabi.NodeRefs.Fields): what Fill copies.
var nodeRefFields = [hostabi.RefFields]uint32{
	hostabi.RefUUID:                 fUUID + 1,
	hostabi.RefName:                 fName + 1,
	hostabi.RefResourceClass:        fResourceClass + 1,
	hostabi.RefInstanceUUID:         fInstanceUUID + 1,
	hostabi.RefPowerState:           fPowerState + 1,
	hostabi.RefProvisionState:       fProvisionState + 1,
	hostabi.RefTargetProvisionState: fTargetProvisionState + 1,
	hostabi.RefFault:                fFault + 1,
	hostabi.RefShard:                fShard + 1,
	hostabi.RefConductorGroup:       fConductorGroup + 1,
	hostabi.RefMaintenance:          fMaintenance + 1,
	hostabi.RefRetired:              fRetired + 1,
	hostabi.RefTraits:               fTraits + 1,
}

func (p projected) Len() int          { return p.r.Len() }
func (p projected) Next() string      { return p.r.TopString(0) }
func (p projected) UUID(i int) string { return p.r.String(i, fUUID) }
func (p projected) Fill(dst []hostabi.Node) error {
	if p.part {
		return errors.New("the page holds only uuids (the host kept the rest)")
	}
	r := &p.r
	for i := range dst {
		if r.String(i, fUUID) == "" { // absent, null or ""
			return fmt.Errorf("nodes[%d] has no uuid", i)
		}
		dst[i] = hostabi.Node{
			UUID:                 r.String(i, fUUID),
			Name:                 r.String(i, fName),
			ResourceClass:        r.String(i, fResourceClass),
			ProvisionState:       r.String(i, fProvisionState),
			TargetProvisionState: r.String(i, fTargetProvisionState),
			PowerState:           r.String(i, fPowerState),
			Maintenance:          r.Bool(i, fMaintenance),
			InstanceUUID:         r.String(i, fInstanceUUID),
			ConductorGroup:       r.String(i, fConductorGroup),
			Shard:                r.String(i, fShard),
			Traits:               r.Strings(i, fTraits),
			Fault:                r.String(i, fFault),
			Retired:              r.Bool(i, fRetired),
		}
		if p.w != nil {
			if err := p.w.fill(r, i, &dst[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// Nodes is a Page of already decoded nodes, for decoders that build
// hostabi.Node themselves.
type Nodes struct {
	List []hostabi.Node
	Link string
}

// Len is the number of nodes on the page.
func (p Nodes) Len() int { return len(p.List) }

// Next is the link to the next page, "" on the last.
func (p Nodes) Next() string { return p.Link }

// UUID is the uuid of the i-th node.
func (p Nodes) UUID(i int) string { return p.List[i].UUID }

// Fill copies the nodes into dst, refusing one without a uuid.
func (p Nodes) Fill(dst []hostabi.Node) error {
	for i, n := range p.List {
		if n.UUID == "" {
			return fmt.Errorf("nodes[%d] has no uuid", i)
		}
		dst[i] = n
	}
	return nil
}
