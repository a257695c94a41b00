package config

import (
	"fmt"
	"strings"
)

// Nova is [nova]: running beside nova-compute's Ironic driver, which
// writes the same providers. See docs/NOVA.md.
type Nova struct {
	// Beside makes the engine write nova's reserved values and keep the
	// nodes it alone reserves off the scheduler with hold allocations.
	Beside bool `toml:"beside"`
	// SkipReserveInUse mirrors nova's [workarounds]
	// skip_reserve_in_use_ironic_nodes: it must match nova's setting.
	SkipReserveInUse bool `toml:"skip_reserve_in_use_ironic_nodes"`
	// HoldProject and HoldUser own the hold consumers; they must be used by
	// nothing else (the engine counts their usage to find lost holds).
	// Default: "rpengine-hold-<engine.id>", and with a fleet marker
	// (fleet.go) the project "rpengine-hold-fleet-<hash>".
	HoldProject string `toml:"hold_project_id"`
	HoldUser    string `toml:"hold_user_id"`
	// ProviderConfig is where `engine nova-config` says the provider-config
	// YAML goes (nova's [compute] provider_config_location).
	ProviderConfig string `toml:"provider_config_location"`
	// ComputeHosts are the [DEFAULT] host names of the nova-compute
	// services that serve this engine's conductor group: nova's [ironic]
	// peer_list, without which nova 26 refuses partition_key.
	ComputeHosts []string `toml:"compute_hosts"`
}

// HoldIDs returns the project and user of this engine's hold consumers.
func (c *Config) HoldIDs() (project, user string) {
	project, user = c.Nova.HoldProject, c.Nova.HoldUser
	defProject, defUser := c.holdDefault()
	if project == "" {
		project = defProject
	}
	if user == "" {
		user = defUser
	}
	return project, user
}

func (c *Config) checkNova() []error {
	if !c.Nova.Beside {
		return nil
	}
	var errs []error
	for _, t := range c.Provider.MarkerTraits {
		// nova's provider config takes custom traits only, and nova
		// replaces every other trait with the node's own: any other
		// marker would be stripped at each refresh and written back.
		switch {
		case t == "OWNER_NOVA":
			errs = append(errs, fmt.Errorf("provider.marker_traits: OWNER_NOVA is nova's to write beside nova (nova.beside = true): "+
				"nova >= 34 writes it on every provider it reports, and nova 26 strips it; leave it out"))
		case !strings.HasPrefix(t, "CUSTOM_") && t != "COMPUTE_NODE":
			errs = append(errs, fmt.Errorf("provider.marker_traits: %s cannot be kept beside nova (nova.beside = true): "+
				"use COMPUTE_NODE (nova adds it) or CUSTOM_ traits (nova adds them from its provider config)", t))
		}
	}
	project, user := c.HoldIDs()
	for key, v := range map[string]string{"nova.hold_project_id": project, "nova.hold_user_id": user} {
		if len(v) > 255 {
			errs = append(errs, fmt.Errorf("%s: longer than Placement's 255 characters", key))
		}
	}
	return errs
}
