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
// nothing could be asked at all.
func (c *Client) ConfirmDeleted(uuids []string) (deleted, present []string, err error) {
	v, err := c.negotiate()
	if err != nil {
		return nil, nil, fmt.Errorf("confirm deleted: %w", err)
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
