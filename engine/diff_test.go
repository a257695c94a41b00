package engine

import (
	"reflect"
	"testing"

	"github.com/rpengine/rpengine/engine/placement"
)

func TestPlan(t *testing.T) {
	inv := map[string]placement.Inventory{"CUSTOM_GOLD": {Total: 1, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1}}
	d := Desired{UUID: u1, Name: u1, Inventory: inv, Traits: []string{"A", "B"}, Aggregates: []string{"agg1"}}
	same := Observed{Exists: true, Generation: "7", Inventory: inv, Traits: []string{"B", "A"}, Aggregates: []string{"agg1"}}
	reserved := map[string]placement.Inventory{"CUSTOM_GOLD": {Total: 1, Reserved: 1, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1}}
	cases := []struct {
		name string
		o    Observed
		prev Managed
		want []Write
	}{
		{"in sync: no write at all", same, Managed{}, nil},
		{"missing: create, then everything", Observed{}, Managed{}, []Write{
			{Op: OpCreate, UUID: u1, Name: u1},
			{Op: OpTraits, UUID: u1, Traits: []string{"A", "B"}},
			{Op: OpInventory, UUID: u1, Inventory: inv},
			{Op: OpAggregates, UUID: u1, Aggregates: []string{"agg1"}},
		}},
		{"foreign trait and aggregate survive", Observed{Exists: true, Inventory: inv,
			Traits: []string{"A", "B", "FOREIGN"}, Aggregates: []string{"agg1", "theirs"}}, Managed{}, nil},
		{"a trait we added and no longer want goes", Observed{Exists: true, Inventory: inv,
			Traits: []string{"A", "B", "OLD", "FOREIGN"}, Aggregates: []string{"agg1"}},
			Managed{Traits: []string{"A", "OLD"}}, []Write{{Op: OpTraits, UUID: u1, Traits: []string{"A", "B", "FOREIGN"}}}},
		{"any changed field rewrites the whole record", Observed{Exists: true, Inventory: reserved,
			Traits: []string{"A", "B"}, Aggregates: []string{"agg1"}}, Managed{}, []Write{{Op: OpInventory, UUID: u1, Inventory: inv}}},
	}
	for _, c := range cases {
		if got := Plan(d, c.o, c.prev); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
}
