package ironic

import (
	"fmt"
	"net/url"
	"strconv"

	"github.com/rpengine/rpengine/hostabi/guest"
)

// The probe for changes Ironic does not announce: the conductor sets
// maintenance after failed power syncs, and saves BMC health, without a
// notification. Every node UPDATE moves updated_at, so the nodes sorted
// by it, newest first, name what changed. Ironic 21.4 refuses
// fields=updated_at, hence /detail, kept small by its limit.

const (
	rUUID = iota
	rUpdated
)

var recentPage = guest.Projection{
	Array: "nodes",
	Fields: []guest.Field{
		rUUID:    {Name: "uuid", Kind: guest.KindString},
		rUpdated: {Name: "updated_at", Kind: guest.KindString},
	},
}

// RecentNodes returns the uuids of the limit nodes changed last, newest
// first, and each one's updated_at (null, for a node never updated, is
// its created_at's stand-in "created"). One request.
func (c *Client) RecentNodes(limit int) (uuids, changed []string, err error) {
	v, err := c.negotiate()
	if err != nil {
		return nil, nil, fmt.Errorf("recent nodes: %w", err)
	}
	q := url.Values{"sort_key": {"updated_at"}, "sort_dir": {"desc"}, "limit": {strconv.Itoa(min(limit, c.cfg.PageSize))}}
	path := "/v1/nodes/detail?" + q.Encode()
	resp, err := c.get(path, v)
	if err != nil {
		return nil, nil, fmt.Errorf("recent nodes: %w", err)
	}
	if resp.Status != 200 {
		return nil, nil, fmt.Errorf("recent nodes: %w", apiError(path, resp))
	}
	r, err := guest.Project(resp.Body, recentPage)
	if err != nil {
		return nil, nil, fmt.Errorf("recent nodes: GET %s: malformed body: %w", path, err)
	}
	for i := range r.Len() {
		at := r.String(i, rUpdated)
		if at == "" {
			at = "created"
		}
		uuids, changed = append(uuids, r.String(i, rUUID)), append(changed, at)
	}
	return uuids, changed, nil
}
