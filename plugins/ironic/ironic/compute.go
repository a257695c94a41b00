package ironic

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
)

// ListInstances lists the servers on Config.ComputeHost from the Compute
// API (all projects), each with the node it runs on: Nova's ironic driver
// names a node's hypervisor by the node uuid. Without ComputeHost it
// lists none; the engine then knows consumers only from instance_uuid.
// Like nodes, the list is complete or an error.
func (c *Client) ListInstances() ([]hostabi.Instance, error) {
	if c.cfg.ComputeHost == "" {
		return []hostabi.Instance{}, nil
	}
	for restarts := 0; ; restarts++ {
		out, err := c.serverPages()
		if !errors.Is(err, errMarkerGone) {
			return out, err
		}
		if restarts >= c.cfg.MaxRestarts {
			return nil, fmt.Errorf("list instances: %w, %d time(s) in a row; giving up", err, restarts+1)
		}
		c.warnf("ironic: list instances: %v; restarting", err)
	}
}

const (
	sID = iota
	sNode
)

var serverPage = guest.Projection{
	Array: "servers",
	Fields: []guest.Field{
		sID:   {Name: "id", Kind: guest.KindString},
		sNode: {Name: "OS-EXT-SRV-ATTR:hypervisor_hostname", Kind: guest.KindString},
	},
	Top: []guest.Field{{Name: "servers_links", Kind: guest.KindRaw}},
}

func (c *Client) serverPages() ([]hostabi.Instance, error) {
	out := []hostabi.Instance{}
	seen := map[string]bool{}
	marker := ""
	for page := 1; ; page++ {
		q := url.Values{"host": {c.cfg.ComputeHost}, "all_tenants": {"1"}, "limit": {strconv.Itoa(c.cfg.PageSize)}}
		if marker != "" {
			q.Set("marker", marker)
		}
		path := "/servers/detail?" + q.Encode()
		resp, err := c.http(guest.HTTPRequest{Service: serviceCompute, Method: "GET", Path: path,
			Header:  map[string]string{"Accept": "application/json", "OpenStack-API-Version": "compute 2.1"},
			Project: &serverPage})
		switch {
		case err != nil:
			return nil, fmt.Errorf("list instances: page %d: GET %s: %w", page, path, err)
		case resp.Status == 400 && marker != "" && strings.Contains(faultString(resp.Body), "marker"):
			return nil, fmt.Errorf("page %d: %w (%s)", page, errMarkerGone, marker)
		case resp.Status != 200:
			return nil, fmt.Errorf("list instances: page %d: %w", page, apiError(path, resp))
		}
		r, err := resp.Records(serverPage)
		if err != nil {
			return nil, fmt.Errorf("list instances: page %d: malformed body: %w", page, err)
		}
		for i := range r.Len() {
			id, node := r.String(i, sID), r.String(i, sNode)
			if id == "" {
				return nil, fmt.Errorf("list instances: page %d: servers[%d] has no id", page, i)
			}
			if hostabi.ValidUUID(node) && !seen[id] { // not yet on a node: no consumer of one
				seen[id] = true
				out = append(out, hostabi.Instance{UUID: id, NodeUUID: node})
			}
			marker = id
		}
		if r.Len() == 0 || !hasNext(r.TopString(0)) && r.Len() < c.cfg.PageSize {
			return out, nil
		}
	}
}

func hasNext(linksJSON string) bool {
	var links []struct{ Rel string }
	_ = json.Unmarshal([]byte(linksJSON), &links)
	for _, l := range links {
		if l.Rel == "next" {
			return true
		}
	}
	return false
}
