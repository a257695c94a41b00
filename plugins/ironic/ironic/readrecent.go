package ironic

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/rpengine/rpengine/hostabi"
)

// A node sync asks for nodes a notification just named: by definition
// among the nodes changed last. So a batch of a few is read first from one
// page of the nodes sorted by updated_at, newest first (the listing's own
// fields and decoder: a node read so is exactly the node a listing
// gives), and only those not in it, one GET each. Where every request
// costs a second, a batch of 18 costs 1 request instead of 18.

// readRecent reads the nodes of ask (asked holds the same uuids) found
// among the most recently changed ones, in one request, and returns the
// rest to read otherwise.
func (c *Client) readRecent(ask []string, asked map[string]bool, v version) (found []hostabi.Node, rest []string, err error) {
	limit := min(c.cfg.PageSize, max(2*len(ask), len(ask)+recentSlack))
	path := recentPath(v, limit, c.want.fieldList(v))
	resp, err := c.get(path, v)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case resp.Status == 400:
		return nil, nil, fmt.Errorf("%w: %w", errRecentRefused, apiError(path, resp))
	case resp.Status != 200:
		return nil, nil, apiError(path, resp)
	}
	if err := checkAnswered(path, resp, v); err != nil {
		return nil, nil, err
	}
	page, err := c.decodeBody(resp.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("GET %s: malformed body: %w", path, err)
	}
	all := make([]hostabi.Node, page.Len())
	if err := page.Fill(all); err != nil {
		return nil, nil, fmt.Errorf("GET %s: %w", path, err)
	}
	got := map[string]bool{}
	for _, n := range all {
		if id := strings.ToLower(n.UUID); asked[id] && !got[id] {
			got[id] = true
			found = append(found, n)
		}
	}
	for _, id := range ask {
		if !got[id] {
			rest = append(rest, id)
		}
	}
	return found, rest, nil
}

// errRecentRefused: Ironic refused the sort by updated_at (400).
var errRecentRefused = errors.New("the listing sorted by updated_at was refused")

// recentSlack is how many more nodes than asked the recent page holds, at
// least: others may have changed since.
const recentSlack = 10

// recentPath is the listing's request, sorted by updated_at, newest
// first, one page of limit, with fields.
func recentPath(v version, limit int, fields string) string {
	p := url.Values{}
	p.Set("fields", fields)
	p.Set("limit", strconv.Itoa(limit))
	p.Set("sort_key", "updated_at")
	p.Set("sort_dir", "desc")
	return nodesPath(p)
}
