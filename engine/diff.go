package engine

import (
	"maps"
	"slices"

	"github.com/rpengine/rpengine/engine/placement"
)

// Observed is a provider as last read from (or written to) Placement.
type Observed struct {
	Exists     bool
	Generation placement.Generation
	Inventory  map[string]placement.Inventory
	Traits     []string
	Aggregates []string
}

// Managed is what the engine itself added last time; only these may be
// removed. Without a record (a lost state file) the engine only adds.
type Managed struct {
	Traits     []string
	Aggregates []string
}

// Op names a kind of write.
type Op string

const (
	OpCreate     Op = "create_provider"
	OpTraits     Op = "set_traits"
	OpInventory  Op = "set_inventories"
	OpAggregates Op = "set_aggregates"
)

// Write is one change to one provider. Only the field of its Op is set.
type Write struct {
	Op         Op                             `json:"op"`
	UUID       string                         `json:"uuid"`
	Name       string                         `json:"name,omitempty"`
	Inventory  map[string]placement.Inventory `json:"inventories,omitempty"`
	Traits     []string                       `json:"traits,omitempty"`
	Aggregates []string                       `json:"aggregates,omitempty"`
}

// Plan lists the writes that make o match d, in the order they must be
// sent: create, traits (so the owner marker lands first), inventory,
// aggregates. A write whose result equals what is there is never planned:
// Placement bumps the generation even for an identical PUT.
func Plan(d Desired, o Observed, prev Managed) []Write {
	var ws []Write
	if !o.Exists {
		ws = append(ws, Write{Op: OpCreate, UUID: d.UUID, Name: d.Name})
	}
	if t := merge(o.Traits, prev.Traits, d.Traits); !sameSet(t, o.Traits) {
		ws = append(ws, Write{Op: OpTraits, UUID: d.UUID, Traits: t})
	}
	if !maps.Equal(o.Inventory, d.Inventory) {
		ws = append(ws, Write{Op: OpInventory, UUID: d.UUID, Inventory: d.Inventory})
	}
	if a := merge(o.Aggregates, prev.Aggregates, d.Aggregates); !sameSet(a, o.Aggregates) {
		ws = append(ws, Write{Op: OpAggregates, UUID: d.UUID, Aggregates: a})
	}
	return ws
}

// merge keeps every observed item except those the engine added before and
// no longer wants, then adds what it wants now.
func merge(observed, before, want []string) []string {
	out := make([]string, 0, len(observed)+len(want))
	for _, x := range observed {
		if slices.Contains(before, x) && !slices.Contains(want, x) {
			continue
		}
		out = append(out, x)
	}
	out = append(out, want...)
	slices.Sort(out)
	return slices.Compact(out)
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}
