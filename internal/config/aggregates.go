package config

import (
	"fmt"
	"strings"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/baremetal"
	"github.com/rpengine/rpengine/hostabi"
)

// AggregateRule is one [[provider.aggregate_rules]] table: the nodes it
// selects (every key set must match; conductor_group = "" is Ironic's
// default group) and the aggregates their providers go in. The first
// rule that matches a node wins (engine.AggregateRules says why).
type AggregateRule struct {
	Zone           string   `toml:"zone"`
	ConductorGroup *string  `toml:"conductor_group"`
	Shard          *string  `toml:"shard"`
	ResourceClass  *string  `toml:"resource_class"`
	Aggregates     []string `toml:"aggregates"`
}

// AggregateRules are the rules as the engine takes them.
func (c *Config) AggregateRules() engine.AggregateRules {
	if len(c.Provider.AggregateRules) == 0 {
		return nil
	}
	out := make(engine.AggregateRules, len(c.Provider.AggregateRules))
	for i, r := range c.Provider.AggregateRules {
		out[i] = engine.AggregateRule{Zone: r.Zone, ConductorGroup: r.ConductorGroup, Shard: r.Shard,
			ResourceClass: r.ResourceClass, Aggregates: r.Aggregates}
	}
	return out
}

// checkAggregates names each rule that cannot work: one that selects
// nothing (a rule for every node is provider.aggregates), one without
// aggregates, an aggregate that is not a uuid (Placement refuses it,
// every cycle), a class that cannot be a class, and a rule that can never
// match because an earlier one selects the same nodes.
func (c *Config) checkAggregates() []error {
	var errs []error
	for i, r := range c.Provider.AggregateRules {
		key := fmt.Sprintf("provider.aggregate_rules[%d]", i)
		if r.ConductorGroup == nil && r.Shard == nil && r.ResourceClass == nil {
			errs = append(errs, fmt.Errorf("%s: selects no node: set conductor_group, shard or resource_class "+
				"(aggregates for every provider go in provider.aggregates)", key))
		}
		if len(r.Aggregates) == 0 {
			errs = append(errs, fmt.Errorf("%s.aggregates: is required (the nova aggregates' uuids)", key))
		}
		for _, a := range r.Aggregates {
			if !hostabi.ValidUUID(a) {
				errs = append(errs, fmt.Errorf("%s.aggregates: %q is not a uuid (a Placement aggregate is the nova aggregate's uuid)", key, a))
			}
		}
		if r.ResourceClass != nil && baremetal.ValidCustomName(baremetal.NormalizeResourceClass(*r.ResourceClass)) != nil {
			errs = append(errs, fmt.Errorf("%s.resource_class: %q is not a resource class Ironic could report", key, *r.ResourceClass))
		}
		for j, earlier := range c.Provider.AggregateRules[:i] {
			if covers(earlier, r) {
				errs = append(errs, fmt.Errorf("%s: never matches: provider.aggregate_rules[%d] comes first and selects every node it does", key, j))
				break
			}
		}
	}
	for _, a := range c.Provider.Aggregates {
		if !hostabi.ValidUUID(a) {
			errs = append(errs, fmt.Errorf("provider.aggregates: %q is not a uuid", a))
		}
	}
	return errs
}

// covers says whether every node rule b selects is selected by a: each
// selector a sets, b sets to the same value.
func covers(a, b AggregateRule) bool {
	same := func(x, y *string, norm func(string) string) bool {
		return x == nil || y != nil && norm(*x) == norm(*y)
	}
	id := func(s string) string { return s }
	return same(a.ConductorGroup, b.ConductorGroup, strings.ToLower) && same(a.Shard, b.Shard, id) &&
		same(a.ResourceClass, b.ResourceClass, baremetal.NormalizeResourceClass)
}
