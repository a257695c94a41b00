package ironic

import (
	"fmt"
	"strings"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
)

// ConfirmDeleted asks Ironic about each node, one GET /v1/nodes/{uuid}
// each: Ironic's own 404 for that node proves deletion, 200 proves
// presence, and anything else (an error, another status, a 404 that is not
// Ironic's "could not be found" for this node, a malformed uuid) leaves the
// node in neither list: unknown, never deleted. err is set only when
// nothing could be asked at all. When more nodes are asked than a listing
// of all of Ironic's nodes takes pages, one such listing answers for all
// of them instead (byListing).
func (c *Client) ConfirmDeleted(uuids []string) (deleted, present []string, err error) {
	c.want = nil // uuids alone
	v, err := c.negotiate()
	if err != nil {
		return nil, nil, fmt.Errorf("confirm deleted: %w", err)
	}
	if len(uuids) > max(perNodeProofs, c.proofPages) {
		return c.byListing(uuids, v)
	}
	deleted, present = []string{}, []string{}
	for _, id := range uuids {
		switch state, why := c.nodeExists(id, v); state {
		case nodeGone:
			deleted = append(deleted, id)
		case nodePresent:
			present = append(present, id)
		default:
			c.warnf("ironic: cannot tell whether node %q was deleted: %s", id, why)
		}
	}
	return deleted, present, nil
}

type existence int

const (
	nodeUnknown existence = iota
	nodeGone
	nodePresent
)

func (c *Client) nodeExists(id string, v version) (existence, string) {
	if !hostabi.ValidUUID(id) {
		return nodeUnknown, "not a UUID"
	}
	path := "/v1/nodes/" + id + "?fields=uuid"
	resp, err := c.get(path, v)
	if err != nil {
		return nodeUnknown, err.Error()
	}
	switch resp.Status {
	case 200:
		if r, err := guest.Project(resp.Body, nodeShow); err != nil || !strings.EqualFold(r.TopString(0), id) {
			return nodeUnknown, fmt.Sprintf("GET %s answered 200 with another body: %.200s", path, resp.Body)
		}
		return nodePresent, ""
	case 404:
		// Only Ironic's own answer is proof: a 404 from a proxy or a wrong
		// endpoint carries neither the version header nor this message.
		msg := faultString(resp.Body)
		if header(resp, versionHeader) != "" && strings.Contains(msg, id) && strings.Contains(msg, "could not be found") {
			return nodeGone, ""
		}
		return nodeUnknown, fmt.Sprintf("GET %s: 404 that is not Ironic's: %s", path, msg)
	}
	return nodeUnknown, apiError(path, resp).Error()
}

var nodeShow = guest.Projection{Top: []guest.Field{{Name: "uuid", Kind: guest.KindString}}}

// perNodeProofs is the most nodes proven one GET each before a listing of
// all nodes is preferred, until a listing's page count is known.
const perNodeProofs = 20

// byListing proves many nodes at once from one complete listing of every
// node Ironic shows this plugin (uuids only, paged by marker, sorted by id,
// no filter): a node in it is present, a node not in it is deleted, as
// Ironic's 404 for that node would say (a node another project owns is
// hidden from both alike). A listing that fails in any page proves
// nothing: every node is then unknown, never deleted.
func (c *Client) byListing(uuids []string, v version) (deleted, present []string, err error) {
	pages, err := c.listQuery(query{uuidOnly: true}, v, false)
	if err != nil {
		c.warnf("ironic: cannot tell whether %d unlisted nodes were deleted: list all node uuids: %v", len(uuids), err)
		return []string{}, []string{}, nil
	}
	c.proofPages = len(pages)
	seen := map[string]bool{}
	for _, p := range pages {
		for i := range p.Len() {
			seen[strings.ToLower(p.UUID(i))] = true
		}
	}
	deleted, present = []string{}, []string{}
	bad := 0
	for _, id := range uuids {
		switch {
		case !hostabi.ValidUUID(id):
			bad++
		case seen[strings.ToLower(id)]:
			present = append(present, id)
		default:
			deleted = append(deleted, id)
		}
	}
	if bad > 0 {
		c.warnf("ironic: cannot tell whether %d node(s) were deleted: not a UUID", bad)
	}
	return deleted, present, nil
}
