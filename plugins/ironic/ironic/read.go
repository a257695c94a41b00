package ironic

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
)

// ReadNodes reads each node with one GET /v1/nodes/{uuid}, asking the
// same fields at the same version as a listing and decoding them the same
// way, so a node read here is exactly the node a listing gives. Ironic's
// own 404 leaves the node out; any other failure fails the whole read.
// More than Config.ReadByListingAbove distinct nodes are read from one
// listing instead (readListed): a burst costs pages, not a request each;
// two or more are first looked for among the nodes changed last
// (readRecent), one request.
func (c *Client) ReadNodes(uuids []string) ([]hostabi.Node, error) {
	return c.ReadNodesWith(uuids, hostabi.NodeFields{})
}

// ReadNodesWith is ReadNodes with the optional node fields a listing
// with them gives (guest.FieldReader).
func (c *Client) ReadNodesWith(uuids []string, fields hostabi.NodeFields) ([]hostabi.Node, error) {
	if err := c.serve(fields); err != nil {
		return nil, fmt.Errorf("read nodes: %w", err)
	}
	v, err := c.negotiate()
	if err == nil {
		err = c.want.check(v)
	}
	if err != nil {
		return nil, fmt.Errorf("read nodes: %w", err)
	}
	ask := make([]string, 0, len(uuids))
	seen := map[string]bool{}
	for _, id := range uuids {
		id = strings.ToLower(id)
		if !hostabi.ValidUUID(id) {
			return nil, fmt.Errorf("read nodes: %q is not a uuid", clip(id))
		}
		if !seen[id] {
			seen[id] = true
			ask = append(ask, id)
		}
	}
	if n := c.cfg.ReadByListingAbove; n > 0 && len(ask) > n {
		return c.readListed(seen)
	}
	out := make([]hostabi.Node, 0, len(ask))
	if len(ask) > 1 && !c.noRecent {
		found, rest, err := c.readRecent(ask, seen, v)
		switch {
		case errors.Is(err, errRecentRefused):
			c.noRecent = true // an Ironic that will not sort so: a GET each from now on
			c.warnf("ironic: %v; reading nodes one GET each", err)
		case err != nil:
			return nil, fmt.Errorf("read nodes: the most recently changed: %w", err)
		default:
			out, ask = append(out, found...), rest
		}
	}
	for _, id := range ask {
		n, found, err := c.readNode(id, v)
		if err != nil {
			return nil, fmt.Errorf("read nodes: %w", err)
		}
		if found {
			out = append(out, n)
		}
	}
	return out, nil
}

// readListed reads the nodes asked from a listing of every node: the
// listing's pages, fields and checks, so a node is exactly what a cycle
// sees; a node the listing lacks is left out, as a 404 is.
func (c *Client) readListed(asked map[string]bool) ([]hostabi.Node, error) {
	all, err := c.listPages(hostabi.ListNodesRequest{}, false) // the fields are the call's (c.want)
	if err != nil {
		return nil, fmt.Errorf("read nodes by listing: %w", err)
	}
	nodes, err := c.merged(all)
	if err != nil {
		return nil, fmt.Errorf("read nodes by listing: %w", err)
	}
	out := make([]hostabi.Node, 0, len(asked))
	for _, n := range nodes {
		if asked[strings.ToLower(n.UUID)] {
			out = append(out, n)
		}
	}
	return out, nil
}

func (c *Client) readNode(id string, v version) (hostabi.Node, bool, error) {
	path := "/v1/nodes/" + id + "?fields=" + c.want.fieldList(v)
	resp, err := c.get(path, v)
	if err != nil {
		return hostabi.Node{}, false, err
	}
	switch resp.Status {
	case 200:
	case 404:
		if msg := faultString(resp.Body); header(resp, versionHeader) != "" && strings.Contains(msg, "could not be found") {
			return hostabi.Node{}, false, nil
		}
		return hostabi.Node{}, false, apiError(path, resp)
	default:
		return hostabi.Node{}, false, apiError(path, resp)
	}
	// The body is one node; as a one-node page it goes through the very
	// decoder a listing uses.
	page, err := c.decodeBody(bytes.Join([][]byte{[]byte(`{"nodes":[`), resp.Body, []byte(`]}`)}, nil))
	if err != nil || page.Len() != 1 {
		return hostabi.Node{}, false, fmt.Errorf("GET %s: malformed body: %v", path, err)
	}
	dst := make([]hostabi.Node, 1)
	if err := page.Fill(dst); err != nil {
		return hostabi.Node{}, false, fmt.Errorf("GET %s: %w", path, err)
	}
	if !strings.EqualFold(dst[0].UUID, id) {
		return hostabi.Node{}, false, fmt.Errorf("GET %s answered node %q", path, clip(dst[0].UUID))
	}
	return dst[0], true, nil
}

// ReadInstances lists the servers on the given nodes (compute_host set):
// one GET /servers/detail?host=...&node=... each, the listing's own
// filter narrowed to the node. Without compute_host there are none, as
// for ListInstances.
func (c *Client) ReadInstances(uuids []string) ([]hostabi.Instance, error) {
	out := []hostabi.Instance{}
	if c.cfg.ComputeHost == "" {
		return out, nil
	}
	for _, id := range uuids {
		q := url.Values{"host": {c.cfg.ComputeHost}, "all_tenants": {"1"}, "node": {id}, "limit": {strconv.Itoa(c.cfg.PageSize)}}
		path := "/servers/detail?" + q.Encode()
		resp, err := c.http(guest.HTTPRequest{Service: serviceCompute, Method: "GET", Path: path,
			Header: map[string]string{"Accept": "application/json", "OpenStack-API-Version": "compute 2.1"}})
		if err != nil {
			return nil, fmt.Errorf("read instances: GET %s: %w", path, err)
		}
		if resp.Status != 200 {
			return nil, fmt.Errorf("read instances: %w", apiError(path, resp))
		}
		r, err := guest.Project(resp.Body, serverPage)
		if err != nil {
			return nil, fmt.Errorf("read instances: GET %s: malformed body: %w", path, err)
		}
		if r.Len() >= c.cfg.PageSize {
			return nil, fmt.Errorf("read instances: GET %s: %d servers on one node", path, r.Len())
		}
		for i := range r.Len() {
			if sid, node := r.String(i, sID), r.String(i, sNode); sid != "" && strings.EqualFold(node, id) {
				out = append(out, hostabi.Instance{UUID: sid, NodeUUID: node})
			}
		}
	}
	return out, nil
}
