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
	Owner          *string  `toml:"owner"`
	Property       string   `toml:"property"`
	Value          *string  `toml:"value"`
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
			ResourceClass: r.ResourceClass, Owner: r.Owner, Property: r.Property, Value: r.Value, Aggregates: r.Aggregates}
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
		if r.ConductorGroup == nil && r.Shard == nil && r.ResourceClass == nil && r.Owner == nil && r.Value == nil {
			errs = append(errs, fmt.Errorf("%s: selects no node: set conductor_group, shard, resource_class, owner or property "+
				"(aggregates for every provider go in provider.aggregates)", key))
		}
		errs = append(errs, checkProperty(key, r)...)
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
	if n := len(c.AggregateRules().Fields().Properties); n > hostabi.MaxProperties {
		errs = append(errs, fmt.Errorf("provider.aggregate_rules: name %d properties, more than %d", n, hostabi.MaxProperties))
	}
	for _, a := range c.Provider.Aggregates {
		if !hostabi.ValidUUID(a) {
			errs = append(errs, fmt.Errorf("provider.aggregates: %q is not a uuid", a))
		}
	}
	return errs
}

// checkProperty names a property without a value, a value without a
// property, and a name no source could hold (Ironic's keys are at most
// 255 bytes, as the host caps a field).
func checkProperty(key string, r AggregateRule) []error {
	switch {
	case r.Property != "" && r.Value == nil:
		return []error{fmt.Errorf("%s: property = %q needs value = \"...\", the value it must have", key, r.Property)}
	case r.Property == "" && r.Value != nil:
		return []error{fmt.Errorf("%s: value = %q needs property = \"...\" (the Ironic plugin: \"properties.<key>\" or \"extra.<key>\")", key, *r.Value)}
	case len(r.Property) > 255:
		return []error{fmt.Errorf("%s.property: %d bytes, more than 255", key, len(r.Property))}
	}
	return nil
}

// covers says whether every node rule b selects is selected by a: each
// selector a sets, b sets to the same value.
func covers(a, b AggregateRule) bool {
	same := func(x, y *string, norm func(string) string) bool {
		return x == nil || y != nil && norm(*x) == norm(*y)
	}
	id := func(s string) string { return s }
	return same(a.ConductorGroup, b.ConductorGroup, strings.ToLower) && same(a.Shard, b.Shard, id) &&
		same(a.ResourceClass, b.ResourceClass, baremetal.NormalizeResourceClass) && same(a.Owner, b.Owner, id) &&
		(a.Value == nil || a.Property == b.Property && same(a.Value, b.Value, id))
}
