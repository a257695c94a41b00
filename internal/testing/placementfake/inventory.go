package placementfake

import (
	"maps"
	"net/http"
	"slices"
	"strings"
)

type inventoriesJSON struct {
	Generation  int64                `json:"resource_provider_generation"`
	Inventories map[string]Inventory `json:"inventories"`
}

func (s *Server) getInventories(c *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.provider(c, notFoundTwiceSpaced); p != nil {
		c.reply(http.StatusOK, inventoriesJSON{s.st.sent(p.gen), p.inv})
	}
}

type inventoryIn struct {
	Total           intField `json:"total"`
	Reserved        intField `json:"reserved"`
	MinUnit         intField `json:"min_unit"`
	MaxUnit         intField `json:"max_unit"`
	StepSize        intField `json:"step_size"`
	AllocationRatio numField `json:"allocation_ratio"`
	Generation      intField `json:"resource_provider_generation"` // allowed, ignored
}

// putInventories replaces all inventory. The checks run in the real order:
// provider, schema, generation, capacity, class, in use. Every success
// bumps the generation, even when nothing changed.
func (s *Server) putInventories(c *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.provider(c, notFound)
	if p == nil {
		return
	}
	var b struct {
		Generation  intField                `json:"resource_provider_generation"`
		Inventories *map[string]inventoryIn `json:"inventories"`
	}
	if !c.decode(&b) || !b.Generation.check(c, "resource_provider_generation") {
		return
	}
	if b.Inventories == nil {
		c.fail(http.StatusBadRequest, "", "JSON does not validate: 'inventories' is a required property")
		return
	}
	want := map[string]Inventory{}
	classes := slices.Sorted(maps.Keys(*b.Inventories))
	for _, rc := range classes {
		inv, ok := inventoryFrom(c, (*b.Inventories)[rc])
		if !ok {
			return
		}
		want[rc] = inv
	}
	if b.Generation.Value != p.gen {
		c.fail(http.StatusConflict, CodeConcurrentUpdate, "resource provider generation conflict")
		return
	}
	for _, rc := range classes {
		capacity := want[rc].capacity()
		if capacity < 0 || (c.minor < 26 && capacity == 0) {
			c.fail(http.StatusBadRequest, "", "Unable to update inventory for resource provider "+p.uuid+": "+capacityMessage(rc, p.uuid, c.minor))
			return
		}
	}
	for _, rc := range classes {
		if !s.st.classes[rc] {
			c.fail(http.StatusBadRequest, "", "Unknown resource class in inventory for resource provider "+p.uuid+": No such resource class "+rc+".")
			return
		}
	}
	if inUse := removedInUse(p, want); inUse != "" {
		c.fail(http.StatusConflict, CodeInventoryInUse, "update conflict: Inventory for '"+inUse+"' on resource provider '"+p.uuid+"' in use.")
		return
	}
	// Shrinking below usage is allowed: the real server only logs a warning.
	p.inv = want
	s.st.bump(p)
	c.reply(http.StatusOK, inventoriesJSON{s.st.sent(p.gen), p.inv})
}

// deleteInventories is the generation-less DELETE the api-ref calls unsafe.
// It is here so tests can see a client use it.
func (s *Server) deleteInventories(c *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.provider(c, notFound)
	if p == nil {
		return
	}
	if inUse := removedInUse(p, nil); inUse != "" {
		c.fail(http.StatusConflict, CodeInventoryInUse, "Inventory for '"+inUse+"' on resource provider '"+p.uuid+"' in use.")
		return
	}
	p.inv = map[string]Inventory{}
	s.st.bump(p)
	c.reply(http.StatusNoContent, nil)
}

func (s *Server) getUsages(c *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.provider(c, notFoundTwice)
	if p == nil {
		return
	}
	usages := map[string]int64{}
	for rc := range p.inv {
		usages[rc] = p.usage[rc]
	}
	c.reply(http.StatusOK, map[string]any{"resource_provider_generation": s.st.sent(p.gen), "usages": usages})
}

// inventoryFrom applies the schema and the defaults.
func inventoryFrom(c *call, in inventoryIn) (Inventory, bool) {
	var inv Inventory
	var ok bool
	if !in.Total.check(c, "total") {
		return inv, false
	}
	if inv.Total, ok = in.Total.inRange(c, "total", 1, 0); !ok {
		return inv, false
	}
	if inv.Reserved, ok = in.Reserved.inRange(c, "reserved", 0, 0); !ok {
		return inv, false
	}
	if inv.MinUnit, ok = in.MinUnit.inRange(c, "min_unit", 1, 1); !ok {
		return inv, false
	}
	if inv.MaxUnit, ok = in.MaxUnit.inRange(c, "max_unit", 1, maxInt); !ok {
		return inv, false
	}
	if inv.StepSize, ok = in.StepSize.inRange(c, "step_size", 1, 1); !ok {
		return inv, false
	}
	inv.AllocationRatio = 1.0
	if r := in.AllocationRatio; r.Set {
		switch {
		case r.Bad:
			c.fail(http.StatusBadRequest, "", "JSON does not validate: "+pyRepr(r.Raw)+" is not of type 'number'")
			return inv, false
		case r.Value > 3.40282e+38:
			c.fail(http.StatusBadRequest, "", "JSON does not validate: "+r.Raw+" is greater than the maximum of 3.40282e+38")
			return inv, false
		}
		inv.AllocationRatio = r.Value
	}
	return inv, true
}

func capacityMessage(rc, uuid string, minor int) string {
	msg := "Invalid inventory for '" + rc + "' on resource provider '" + uuid + "'. The reserved value is greater than "
	if minor < 26 {
		return msg + "or equal to total."
	}
	return msg + "total."
}

// removedInUse names the classes that want drops while they have usage.
func removedInUse(p *provider, want map[string]Inventory) string {
	var used []string
	for rc := range p.inv {
		if _, kept := want[rc]; !kept && p.usage[rc] > 0 {
			used = append(used, rc)
		}
	}
	slices.Sort(used)
	return strings.Join(used, ", ")
}
