package config

import (
	"crypto/sha256"
	"fmt"
	"strings"
)

// Fleet marker: engines that divide a fleet by partitions beside
// nova-compute share one owner marker. nova writes the marker from its
// provider config and strips any other trait at its next refresh, and a
// provider config is read only when nova starts: a marker per engine
// would have to move with every take-over, a fleet's stays put. The
// engines tell their providers apart by partition (docs/NOVA.md).

// FleetMarker says whether this engine's owner marker is its fleet's:
// [coord] divides by partitions and [nova] beside is on.
func (c *Config) FleetMarker() bool {
	return c.Coord.Enabled() && c.Coord.Partitions > 0 && c.Nova.Beside
}

// FleetID names the fleet every engine of it shares: its coordination
// backend and prefix (and namespace), hashed to a short name that fits a
// trait and a Placement project id. "" without a fleet marker.
func (c *Config) FleetID() string {
	if !c.FleetMarker() {
		return ""
	}
	k := c.Coord
	sum := sha256.Sum256([]byte(k.Backend + "\x00" + k.Namespace + "\x00" + k.Prefix))
	return fmt.Sprintf("fleet-%x", sum[:5])
}

// checkFleet refuses beside nova what no fleet marker can serve.
func (c *Config) checkFleet() []error {
	if c.Coord.Enabled() && c.Nova.Beside && len(c.Coord.Shards) > 0 {
		return []error{fmt.Errorf("coord.shards cannot be divided beside nova (nova.beside = true): nova writes one owner " +
			"marker for the fleet, and a provider's shard is not known from its uuid, so an engine could not tell its " +
			"providers from a peer's; divide by coord.partitions")}
	}
	return nil
}

// holdDefault is the default hold project and user: per engine, or, with
// a fleet marker, the project per fleet (a departed peer's holds stay in
// it for the engine that takes its nodes) and the user per engine (each
// engine counts its own holds).
func (c *Config) holdDefault() (project, user string) {
	mine := "rpengine-hold-" + c.Engine.ID
	if id := c.FleetID(); id != "" {
		return "rpengine-hold-" + strings.ToLower(id), mine
	}
	return mine, mine
}
