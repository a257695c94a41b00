package engine

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/rpengine/rpengine/engine/internal/record"
	"github.com/rpengine/rpengine/engine/placement"
)

// Observed is a provider as last read from (or written to) Placement.
type Observed struct {
	Exists bool
	// Generation is "" once invalidated: left out of the state file,
	// since a Generation refuses to marshal empty.
	Generation placement.Generation `json:",omitempty"`
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

// Op names a kind of write. It is the record's (its Writers record
// writes in a plan): one type, its constants in one place.
type Op = record.Op

// Write is one change to one provider. Only the field of its Op is set.
type Write = record.Write

// The writes, named as Placement's operations.
const (
	OpCreate     = record.OpCreate
	OpTraits     = record.OpTraits
	OpInventory  = record.OpInventory
	OpAggregates = record.OpAggregates
	// OpDelete is a provider deletion, planned only with proof.
	OpDelete = record.OpDelete
	// OpHold and OpReleaseHold are the hold writes beside nova.
	OpHold        = record.OpHold
	OpReleaseHold = record.OpReleaseHold
)

// Plan lists the writes that make o match d, in the order they must be
// sent: create, traits (so the owner marker lands first), inventory,
// aggregates. A write whose result equals what is there is never planned:
// Placement bumps the generation even for an identical PUT.
func Plan(d Desired, o Observed, prev Managed) []Write {
	var ws []Write
	if !o.Exists {
		ws = append(ws, Write{Op: OpCreate, UUID: d.UUID, Name: d.Name})
	}
	if !settled(o.Traits, prev.Traits, d.Traits) {
		ws = append(ws, Write{Op: OpTraits, UUID: d.UUID, Traits: merge(o.Traits, prev.Traits, d.Traits)})
	}
	// A new provider that needs a hold (beside nova) gets its inventory
	// with the hold, in one reshape (settleHolds): written here, the
	// node would be offered from this write until the hold.
	if !maps.Equal(o.Inventory, d.Inventory) && (o.Exists || d.Hold == "") {
		ws = append(ws, Write{Op: OpInventory, UUID: d.UUID, Inventory: d.Inventory})
	}
	if !settled(o.Aggregates, prev.Aggregates, d.Aggregates) {
		ws = append(ws, Write{Op: OpAggregates, UUID: d.UUID, Aggregates: merge(o.Aggregates, prev.Aggregates, d.Aggregates)})
	}
	return ws
}

// settled reports, without allocating, whether merge would leave observed
// as it is: everything wanted is there and nothing to drop is. Sets are a
// handful of items, so the nested loops are cheap.
func settled(observed, before, want []string) bool {
	for _, w := range want {
		if !slices.Contains(observed, w) {
			return false
		}
	}
	for _, b := range before {
		if slices.Contains(observed, b) && !slices.Contains(want, b) {
			return false
		}
	}
	return true
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

// Changes describes what ws change on a provider observed as o.
func Changes(o Observed, ws []Write) []Change {
	var out []Change
	for _, w := range ws {
		switch w.Op {
		case OpCreate:
			out = append(out, Change{Field: "provider", To: w.Name})
		case OpInventory:
			out = append(out, inventoryChanges(o.Inventory, w.Inventory)...)
		case OpTraits:
			if c, ok := setChange("traits", o.Traits, w.Traits); ok {
				out = append(out, c)
			}
		case OpAggregates:
			if c, ok := setChange("aggregates", o.Aggregates, w.Aggregates); ok {
				out = append(out, c)
			}
		case OpDelete:
			out = append(out, Change{Field: "provider", From: w.UUID})
		}
	}
	return out
}

func inventoryChanges(from, to map[string]placement.Inventory) []Change {
	var out []Change
	for _, rc := range slices.Sorted(maps.Keys(from)) {
		if _, ok := to[rc]; !ok {
			out = append(out, Change{Field: "class", Removed: []string{rc}})
		}
	}
	for _, rc := range slices.Sorted(maps.Keys(to)) {
		t := to[rc]
		f, ok := from[rc]
		if !ok {
			out = append(out, Change{Field: "class", Class: rc, Added: []string{rc},
				To: fmt.Sprintf("total %d reserved %d", t.Total, t.Reserved)})
			continue
		}
		num := func(field string, a, b int64) {
			if a != b {
				out = append(out, Change{Field: field, Class: rc, From: strconv.FormatInt(a, 10), To: strconv.FormatInt(b, 10)})
			}
		}
		num("total", f.Total, t.Total)
		num("reserved", f.Reserved, t.Reserved)
		num("min_unit", f.MinUnit, t.MinUnit)
		num("max_unit", f.MaxUnit, t.MaxUnit)
		num("step_size", f.StepSize, t.StepSize)
		if f.AllocationRatio != t.AllocationRatio {
			out = append(out, Change{Field: "allocation_ratio", Class: rc,
				From: strconv.FormatFloat(f.AllocationRatio, 'g', -1, 64), To: strconv.FormatFloat(t.AllocationRatio, 'g', -1, 64)})
		}
	}
	return out
}

func setChange(field string, from, to []string) (Change, bool) {
	c := Change{Field: field}
	for _, x := range to {
		if !slices.Contains(from, x) {
			c.Added = append(c.Added, x)
		}
	}
	for _, x := range from {
		if !slices.Contains(to, x) {
			c.Removed = append(c.Removed, x)
		}
	}
	return c, len(c.Added)+len(c.Removed) > 0
}
