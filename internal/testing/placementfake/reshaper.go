package placementfake

import (
	"maps"
	"net/http"
	"slices"
	"strings"
)

var reshaperRoute = methods{
	"POST": {policy: "reshaper:reshape", json: true, serve: (*Server).reshape},
}

type reshapeBody struct {
	Inventories *map[string]struct {
		Generation  intField                `json:"resource_provider_generation"`
		Inventories *map[string]inventoryIn `json:"inventories"`
	} `json:"inventories"`
	Allocations *map[string]allocationBody `json:"allocations"`
}

// reshape follows placement/handlers/reshaper.py and objects/reshaper.py
// (1.30+): every provider and its generation first, then, in one
// transaction, the interim inventory (old and new classes), the
// allocations (checked against it), the final inventory (refused if it
// drops a class still in use). A refusal changes nothing.
func (s *Server) reshape(c *call) {
	if c.minor < 30 {
		c.fail(http.StatusNotFound, "", "The resource could not be found.")
		return
	}
	var b reshapeBody
	if !c.decode(&b) {
		return
	}
	if b.Inventories == nil || b.Allocations == nil {
		c.fail(http.StatusBadRequest, "", "JSON does not validate: 'inventories' and 'allocations' are required properties")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	final := map[*provider]map[string]Inventory{}
	for _, rp := range slices.Sorted(maps.Keys(*b.Inventories)) {
		in := (*b.Inventories)[rp]
		p := s.st.providers[rp]
		switch {
		case p == nil:
			c.fail(http.StatusBadRequest, "placement.resource_provider.not_found", "Resource provider "+rp+" in inventories not found")
			return
		case !in.Generation.check(c, "resource_provider_generation"):
			return
		case in.Generation.Value != p.gen:
			c.fail(http.StatusConflict, CodeConcurrentUpdate, "resource provider generation conflict for provider "+rp)
			return
		}
		want := map[string]Inventory{}
		if in.Inventories != nil {
			for rc, raw := range *in.Inventories {
				inv, ok := inventoryFrom(c, raw)
				if !ok {
					return
				}
				want[rc] = inv
			}
		}
		final[p] = want
	}
	s.reshapeApply(c, final, *b.Allocations)
}

// reshapeApply runs the transaction, rolling back on any refusal.
func (s *Server) reshapeApply(c *call, final map[*provider]map[string]Inventory, allocs map[string]allocationBody) {
	saved := map[*provider]map[string]Inventory{}
	for p, want := range final {
		saved[p] = p.inv
		interim := maps.Clone(p.inv)
		maps.Copy(interim, want)
		p.inv = interim
	}
	rollback := func() {
		for p, inv := range saved {
			p.inv = inv
		}
	}
	var writes []reshapeWrite
	for _, cu := range slices.Sorted(maps.Keys(allocs)) {
		body := allocs[cu]
		want, ok := body.validate(c)
		if !ok {
			rollback()
			return
		}
		con := s.st.consumers[cu]
		if !s.consumerGenerationOK(c, con, body.ConsumerGeneration) {
			rollback()
			return
		}
		if con == nil {
			con = &consumer{uuid: cu, gen: s.st.newGen(-2), allocs: map[string]map[string]int64{}, kind: "unknown"}
		}
		if !s.fits(c, con, want) {
			rollback()
			return
		}
		writes = append(writes, reshapeWrite{con, want, body})
	}
	for p, want := range final {
		if inUse := droppedInUse(p, want, writes); inUse != "" {
			rollback()
			c.fail(http.StatusConflict, CodeInventoryInUse, "update conflict: Inventory for '"+inUse+"' on resource provider '"+p.uuid+"' in use.")
			return
		}
	}
	for _, w := range writes {
		if w.body.ConsumerType != nil {
			w.con.kind = *w.body.ConsumerType
		}
		w.con.project, w.con.user = *w.body.ProjectID, *w.body.UserID
		s.st.consumers[w.con.uuid] = w.con
		s.st.setAllocations(w.con, w.want)
	}
	for p, want := range final {
		p.inv = want
		s.st.bump(p)
	}
	c.reply(http.StatusNoContent, nil)
}

type reshapeWrite struct {
	con  *consumer
	want map[string]map[string]int64
	body allocationBody
}

// droppedInUse names the classes the final inventory drops that are still
// used once the reshape's allocations replace their consumers' old ones.
func droppedInUse(p *provider, want map[string]Inventory, writes []reshapeWrite) string {
	var used []string
	for _, rc := range slices.Sorted(maps.Keys(p.usage)) {
		if _, kept := want[rc]; kept {
			continue
		}
		n := p.usage[rc]
		for _, w := range writes {
			n += w.want[p.uuid][rc] - w.con.allocs[p.uuid][rc]
		}
		if n > 0 {
			used = append(used, rc)
		}
	}
	return strings.Join(used, ", ")
}
