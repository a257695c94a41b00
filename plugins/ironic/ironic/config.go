package ironic

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/rpengine/rpengine/hostabi"
)

// Config is [plugin.config] of the Ironic plugin. The endpoints are not
// here: the operator grants them in [plugin.services] ("baremetal", and
// "compute" for instances) and the host adds them and any credential.
type Config struct {
	// PageSize is the limit of each node listing request (Ironic caps it
	// at its [api] max_limit, 1,000 by default). Default 1000.
	PageSize int `json:"page_size"`
	// MaxRestarts bounds how often one listing starts over after its
	// marker node was deleted between two pages. Default 3.
	MaxRestarts int `json:"max_restarts"`
	// ComputeHost is this engine's host in the Compute API. When set,
	// ListInstances lists the servers on it; when empty it lists none,
	// and instances are known only from nodes' instance_uuid.
	ComputeHost string `json:"compute_host"`
	// ReadByListingAbove: read_nodes asked for more distinct nodes than
	// this lists the nodes (paged, the listing's fields) instead of one
	// GET per node, so a burst costs pages, not a request per node and a
	// plugin timeout. 0 never lists. Default 20.
	ReadByListingAbove int `json:"read_by_listing_above"`
}

const (
	defaultPageSize    = 1000
	defaultMaxRestarts = 3
	defaultReadListing = 20
)

// ParseConfig reads [plugin.config] as JSON; unknown keys are errors.
func ParseConfig(raw []byte) (Config, error) {
	c := Config{PageSize: defaultPageSize, MaxRestarts: defaultMaxRestarts, ReadByListingAbove: defaultReadListing}
	if len(bytes.TrimSpace(raw)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return c, fmt.Errorf("ironic plugin config: %w", err)
		}
	}
	switch {
	case c.PageSize < 1 || c.PageSize > 1000:
		return c, fmt.Errorf("ironic plugin config: page_size = %d, want 1..1000", c.PageSize)
	case c.ReadByListingAbove < 0 || c.ReadByListingAbove > hostabi.MaxReadNodes:
		return c, fmt.Errorf("ironic plugin config: read_by_listing_above = %d, want 0..%d", c.ReadByListingAbove, hostabi.MaxReadNodes)
	case c.MaxRestarts < 0 || c.MaxRestarts > 100:
		return c, fmt.Errorf("ironic plugin config: max_restarts = %d, want 0..100", c.MaxRestarts)
	}
	return c, nil
}

// Services are the HTTP services the plugin calls with this configuration
// (declared in describe; the host refuses to load it while one is not
// granted): baremetal always, compute when ComputeHost is set.
func (c Config) Services() []hostabi.Service {
	s := []hostabi.Service{{Name: serviceBaremetal, Type: "baremetal"}}
	if c.ComputeHost != "" {
		s = append(s, hostabi.Service{Name: serviceCompute, Type: "compute"})
	}
	return s
}
