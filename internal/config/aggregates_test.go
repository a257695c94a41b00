package config

import (
	"strings"
	"testing"
)

const rules = `
[provider]
aggregates = ["eeeeeeee-0000-4000-8000-00000000000e"]
[[provider.aggregate_rules]]
zone = "az-gpu"
resource_class = "baremetal-gpu"
aggregates = ["cccccccc-0000-4000-8000-000000000003"]
[[provider.aggregate_rules]]
zone = "az1"
conductor_group = "rack-a"
aggregates = ["aaaaaaaa-0000-4000-8000-000000000001"]
[[provider.aggregate_rules]]
zone = "default"
conductor_group = ""
shard = "s1"
aggregates = ["bbbbbbbb-0000-4000-8000-000000000002"]
`

func TestAggregateRules(t *testing.T) {
	c, err := Parse(good+rules, dirWithPlugin(t))
	if err != nil {
		t.Fatal(err)
	}
	rs := c.AggregateRules()
	if len(rs) != 3 || rs[0].ResourceClass == nil || *rs[0].ResourceClass != "baremetal-gpu" || rs[0].ConductorGroup != nil {
		t.Fatalf("rules %+v", rs)
	}
	if rs[2].ConductorGroup == nil || *rs[2].ConductorGroup != "" || *rs[2].Shard != "s1" || rs[2].Zone != "default" {
		t.Fatalf("the default group's rule %+v", rs[2])
	}
}

// Owner and property rules parse, and a rule on another value or another
// property of the same name is not taken as shadowed.
func TestAggregateRulesByOwnerAndProperty(t *testing.T) {
	text := `[[provider.aggregate_rules]]
property = "extra.rack"
value = "r1"
aggregates = ["aaaaaaaa-0000-4000-8000-000000000001"]
[[provider.aggregate_rules]]
property = "properties.rack"
value = "r1"
aggregates = ["bbbbbbbb-0000-4000-8000-000000000002"]
[[provider.aggregate_rules]]
owner = "p1"
property = "extra.rack"
value = "r2"
aggregates = ["bbbbbbbb-0000-4000-8000-000000000002"]
`
	c, err := Parse(good+text, dirWithPlugin(t))
	if err != nil {
		t.Fatal(err)
	}
	rs := c.AggregateRules()
	if rs[2].Owner == nil || *rs[2].Owner != "p1" || rs[2].Property != "extra.rack" || *rs[2].Value != "r2" {
		t.Fatalf("rule %+v", rs[2])
	}
	if f := rs.Fields(); !f.Owner || len(f.Properties) != 2 {
		t.Fatalf("fields %+v", f)
	}
}

func TestBadAggregateRulesNamed(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"selects nothing", `[[provider.aggregate_rules]]
aggregates = ["aaaaaaaa-0000-4000-8000-000000000001"]`, "provider.aggregate_rules[0]: selects no node"},
		{"no aggregates", `[[provider.aggregate_rules]]
shard = "s1"`, "provider.aggregate_rules[0].aggregates: is required"},
		{"not a uuid", `[[provider.aggregate_rules]]
shard = "s1"
aggregates = ["az1"]`, `provider.aggregate_rules[0].aggregates: "az1" is not a uuid`},
		{"bad class", `[[provider.aggregate_rules]]
resource_class = ""
aggregates = ["aaaaaaaa-0000-4000-8000-000000000001"]`, "provider.aggregate_rules[0].resource_class"},
		{"shadowed", `[[provider.aggregate_rules]]
conductor_group = "Rack-A"
aggregates = ["aaaaaaaa-0000-4000-8000-000000000001"]
[[provider.aggregate_rules]]
conductor_group = "rack-a"
shard = "s1"
aggregates = ["bbbbbbbb-0000-4000-8000-000000000002"]`, "provider.aggregate_rules[1]: never matches: provider.aggregate_rules[0] comes first"},
		{"unknown key", `[[provider.aggregate_rules]]
owner_group = "x"
shard = "s1"
aggregates = ["aaaaaaaa-0000-4000-8000-000000000001"]`, "provider.aggregate_rules.owner_group"},
		{"property without value", `[[provider.aggregate_rules]]
property = "properties.rack"
aggregates = ["aaaaaaaa-0000-4000-8000-000000000001"]`, `provider.aggregate_rules[0]: property = "properties.rack" needs value`},
		{"value without property", `[[provider.aggregate_rules]]
value = "r12"
aggregates = ["aaaaaaaa-0000-4000-8000-000000000001"]`, `provider.aggregate_rules[0]: value = "r12" needs property`},
		{"shadowed by owner", `[[provider.aggregate_rules]]
owner = "p1"
aggregates = ["aaaaaaaa-0000-4000-8000-000000000001"]
[[provider.aggregate_rules]]
owner = "p1"
property = "extra.rack"
value = "r1"
aggregates = ["bbbbbbbb-0000-4000-8000-000000000002"]`, "provider.aggregate_rules[1]: never matches: provider.aggregate_rules[0]"},
		{"shadowed by property", `[[provider.aggregate_rules]]
property = "extra.rack"
value = "r1"
aggregates = ["aaaaaaaa-0000-4000-8000-000000000001"]
[[provider.aggregate_rules]]
property = "extra.rack"
value = "r1"
shard = "s1"
aggregates = ["bbbbbbbb-0000-4000-8000-000000000002"]`, "provider.aggregate_rules[1]: never matches: provider.aggregate_rules[0]"},
		{"shared aggregate not a uuid", `[provider]
aggregates = ["rack"]`, `provider.aggregates: "rack" is not a uuid`},
	} {
		_, err := Parse(good+c.text, dirWithPlugin(t))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}
