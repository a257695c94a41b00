package ironic

import (
	"fmt"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
)

// negotiate returns the version to speak, reading the server's range from
// GET /v1/ the first time and after any refusal (see Client.ver).
func (c *Client) negotiate() (version, error) {
	if !c.ver.zero() {
		return c.ver, nil
	}
	const path = "/v1/"
	resp, err := c.get(path, version{})
	if err != nil {
		return version{}, fmt.Errorf("read the Ironic API versions: %w", err)
	}
	if resp.Status != 200 {
		return version{}, fmt.Errorf("read the Ironic API versions: %w", apiError(path, resp))
	}
	maxS := header(resp, maxHeader)
	if maxS == "" {
		return version{}, fmt.Errorf("GET %s answered without %s: is the baremetal service Ironic?", path, maxHeader)
	}
	serverMax, err := parseVersion(maxS)
	if err != nil {
		return version{}, fmt.Errorf("GET %s: %s: %w", path, maxHeader, err)
	}
	serverMin := version{1, 1}
	if s := header(resp, minHeader); s != "" {
		if serverMin, err = parseVersion(s); err != nil {
			return version{}, fmt.Errorf("GET %s: %s: %w", path, minHeader, err)
		}
	}
	v, err := pick(serverMin, serverMax)
	if err != nil {
		return version{}, err
	}
	c.ver = v
	return v, nil
}

// checkScope refuses a scope the server cannot filter by at version v:
// listing without the filter would claim nodes that are not ours.
func checkScope(v version, req hostabi.ListNodesRequest) error {
	need := func(what string, min version) error {
		return fmt.Errorf("scope filters by %s, which needs Ironic API %s, but the server supports only up to %s: "+
			"refusing to list rather than widen the scope", what, min, v)
	}
	if len(req.Shards) > 0 && v.less(needShard) {
		return need("shard", needShard)
	}
	if len(req.ConductorGroups) > 0 && v.less(needGroup) {
		return need("conductor group", needGroup)
	}
	return nil
}

// checkAnswered makes sure a response was served at the version asked
// for: an API (or a proxy) that dropped the header would have served the
// base version, where filters and fields may silently not apply.
func checkAnswered(path string, resp guest.HTTPResponse, v version) error {
	got := header(resp, versionHeader)
	if got != v.String() {
		return fmt.Errorf("GET %s: answered at API version %q, asked for %s: refusing a listing that may ignore its filters", path, got, v)
	}
	return nil
}
