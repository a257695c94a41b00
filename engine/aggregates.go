package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rpengine/rpengine/engine/baremetal"
	"github.com/rpengine/rpengine/hostabi"
)

// AggregateRule places the providers of the nodes it matches in its
// aggregates (nova's availability zones are Placement aggregates: the
// nova aggregate's uuid, docs/ZONES.md). A rule matches a node when every
// selector it sets matches; a nil selector matches any node. A rule sets
// at least one (config checks it).
type AggregateRule struct {
	// Zone names the rule's availability zone, for reading (explain, the
	// capacity table and metrics) and for `validate`, which checks it
	// against the nova aggregate's availability_zone. "" is allowed.
	Zone           string
	ConductorGroup *string // Ironic's conductor_group; "" is the default group
	Shard          *string
	// ResourceClass matches the node's class as normalised
	// ("baremetal-gold" and "BAREMETAL_GOLD" are the same class).
	ResourceClass *string
	// Owner matches the node's owner exactly (Ironic's owner: a project).
	Owner *string
	// Property names a node property in the source's terms (the Ironic
	// plugin reads "properties.<key>" and "extra.<key>"); Value is the
	// value it must have, exactly. Both or neither (config checks it).
	Property   string
	Value      *string
	Aggregates []string
}

// AggregateRules are the rules in the order written. The first rule that
// matches a node decides its aggregates; the others are not consulted.
//
// # Notes
//
// First match, not the union of every match: an availability zone is
// exclusive (nova refuses a host in two zones), and with a union one
// overlapping rule would quietly put a node in two zones. First match
// lets a narrow rule (one resource class) precede a broad one (its
// conductor group), and a node's zone is one rule that explain can name.
// A node in a zone and, say, a rack aggregate is one rule listing both.
type AggregateRules []AggregateRule

// Match returns the index of the first rule that matches n, or -1.
func (rs AggregateRules) Match(n *hostabi.Node) int {
	return rs.match(n, nil, baremetal.NormalizeResourceClass)
}

// match is Match with the rules' classes already normalised (classes[i],
// when classes is not nil) and norm normalising the node's: the desired
// state passes both cached, since normalising allocates (at 100,000 nodes
// and a class rule, six allocations a node).
func (rs AggregateRules) match(n *hostabi.Node, classes []string, norm func(string) string) int {
	class := ""
	for i := range rs {
		r := &rs[i]
		if r.ConductorGroup != nil && !strings.EqualFold(*r.ConductorGroup, n.ConductorGroup) {
			continue
		}
		if r.Shard != nil && *r.Shard != n.Shard || !r.ownedAndValued(n) {
			continue
		}
		if r.ResourceClass != nil {
			if n.ResourceClass == "" {
				continue
			}
			if class == "" { // normalised once a node, only when a rule asks
				class = norm(n.ResourceClass)
			}
			want := ""
			if classes != nil {
				want = classes[i]
			} else {
				want = norm(*r.ResourceClass)
			}
			if want != class {
				continue
			}
		}
		return i
	}
	return -1
}

// ownedAndValued says whether n has the rule's owner and property value,
// where the rule sets them. A node without the property never matches.
func (r *AggregateRule) ownedAndValued(n *hostabi.Node) bool {
	if r.Owner != nil && *r.Owner != n.Owner {
		return false
	}
	if r.Value == nil {
		return true
	}
	v, ok := n.Properties[r.Property]
	return ok && v == *r.Value
}

// Fields are the optional node fields the rules need from the source
// (hostabi.NodeFields): the owner if a rule names one, and each property
// a rule names, once, in the order first named. None: the source sends
// neither, and a node costs what it did without these rules.
func (rs AggregateRules) Fields() hostabi.NodeFields {
	var f hostabi.NodeFields
	for _, r := range rs {
		f.Owner = f.Owner || r.Owner != nil
		if r.Value != nil && !slices.Contains(f.Properties, r.Property) {
			f.Properties = append(f.Properties, r.Property)
		}
	}
	return f
}

// Zone is the zone of the first rule that matches n, and whether one does.
func (rs AggregateRules) Zone(n *hostabi.Node) (string, bool) {
	if i := rs.Match(n); i >= 0 {
		return rs[i].Zone, true
	}
	return "", false
}

// Describe says what rule i selects, for reading: `conductor_group=a
// resource_class=gold`.
func (r AggregateRule) Describe() string {
	var parts []string
	add := func(key string, v *string) {
		if v != nil {
			parts = append(parts, fmt.Sprintf("%s=%q", key, *v))
		}
	}
	add("conductor_group", r.ConductorGroup)
	add("shard", r.Shard)
	add("resource_class", r.ResourceClass)
	add("owner", r.Owner)
	if r.Value != nil {
		parts = append(parts, fmt.Sprintf("%s=%q", r.Property, *r.Value))
	}
	return strings.Join(parts, " ")
}

// ruleAggregates are each rule's aggregates joined with the ones every
// provider gets, built once per cycle: providers of one rule share one
// slice, as those of no rule share shared.aggregates. classes are the
// rules' classes normalised ("" where a rule has none).
func ruleAggregates(pol Policy) (aggs [][]string, classes []string) {
	aggs, classes = make([][]string, len(pol.AggregateRules)), make([]string, len(pol.AggregateRules))
	for i, r := range pol.AggregateRules {
		aggs[i] = sortedSet(slices.Concat(pol.Aggregates, r.Aggregates))
		if r.ResourceClass != nil {
			classes[i] = baremetal.NormalizeResourceClass(*r.ResourceClass)
		}
	}
	return aggs, classes
}

// aggregatesOf is the aggregates node n's provider should be in: those of
// its rule, if one matches, and always the policy's own.
func (sh *shared) aggregatesOf(n *hostabi.Node) []string {
	if len(sh.rules) == 0 {
		return sh.aggregates
	}
	if i := sh.rules.match(n, sh.ruleClasses, sh.className); i >= 0 {
		return sh.byRule[i]
	}
	return sh.aggregates
}

// className is a node's class normalised, remembered for the cycle: a
// fleet has a handful of classes.
func (sh *shared) className(rc string) string {
	if c, ok := sh.classNames[rc]; ok {
		return c
	}
	if sh.classNames == nil {
		sh.classNames = map[string]string{}
	}
	c := baremetal.NormalizeResourceClass(rc)
	sh.classNames[rc] = c
	return c
}
