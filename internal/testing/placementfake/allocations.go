package placementfake

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
)

type allocationBody struct {
	Allocations *map[string]struct {
		Resources  *map[string]intField `json:"resources"`
		Generation intField             `json:"generation"` // allowed, ignored
	} `json:"allocations"`
	ProjectID          *string         `json:"project_id"`
	UserID             *string         `json:"user_id"`
	ConsumerGeneration intField        `json:"consumer_generation"`
	ConsumerType       *string         `json:"consumer_type"`
	Mappings           json.RawMessage `json:"mappings"`
}

// validate is the 1.28+ PUT /allocations/{c} schema.
func (b *allocationBody) validate(c *call) (map[string]map[string]int64, bool) {
	bad := func(msg string) (map[string]map[string]int64, bool) {
		c.fail(http.StatusBadRequest, "", "JSON does not validate: "+msg)
		return nil, false
	}
	required := map[string]bool{
		"allocations": b.Allocations != nil, "project_id": b.ProjectID != nil, "user_id": b.UserID != nil,
		"consumer_generation": b.ConsumerGeneration.Set || c.minor < 28, "consumer_type": b.ConsumerType != nil || c.minor < 38,
	}
	for _, name := range []string{"allocations", "project_id", "user_id", "consumer_generation", "consumer_type"} {
		if !required[name] {
			return bad("'" + name + "' is a required property")
		}
	}
	switch {
	case c.minor < 38 && b.ConsumerType != nil:
		return bad("Additional properties are not allowed ('consumer_type' was unexpected)")
	case c.minor < 28 && b.ConsumerGeneration.Set:
		return bad("Additional properties are not allowed ('consumer_generation' was unexpected)")
	case b.ConsumerGeneration.Bad:
		return bad(b.ConsumerGeneration.Raw + " is not of type 'integer', 'null'")
	case *b.ProjectID == "" || *b.UserID == "":
		return bad("'' is too short")
	case b.ConsumerType != nil && !validName(*b.ConsumerType):
		return bad("'" + *b.ConsumerType + "' does not match '^[A-Z0-9_]+$'")
	case len(*b.Allocations) == 0 && c.minor < 28:
		return bad("{} does not have enough properties")
	}
	out := map[string]map[string]int64{}
	for rp, a := range *b.Allocations {
		if len(rp) != 36 {
			return bad("Additional properties are not allowed ('" + rp + "' was unexpected)")
		}
		if a.Resources == nil || len(*a.Resources) == 0 {
			return bad("'resources' is a required property")
		}
		out[rp] = map[string]int64{}
		for rc, n := range *a.Resources {
			if !validName(rc) {
				return bad("Additional properties are not allowed ('" + rc + "' was unexpected)")
			}
			if n.Null || n.Bad || n.Value < 1 {
				return bad(n.Raw + " is less than the minimum of 1")
			}
			out[rp][rc] = n.Value
		}
	}
	return out, true
}

// putAllocations follows handlers/allocation.py: schema, consumer
// generation, providers, classes, capacity, then write.
func (s *Server) putAllocations(c *call) {
	var b allocationBody
	if !c.decode(&b) {
		return
	}
	want, ok := b.validate(c)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cu := c.args[0]
	con, existed := s.st.consumers[cu]
	if c.minor >= 28 && !s.consumerGenerationOK(c, con, b.ConsumerGeneration) {
		return
	}
	if !existed {
		con = &consumer{uuid: cu, gen: s.st.newGen(-2), allocs: map[string]map[string]int64{}}
	}
	kind := "unknown" // what the real server shows for consumers written before 1.38
	if b.ConsumerType != nil {
		kind = *b.ConsumerType
	}
	if !existed {
		con.project, con.user, con.kind = *b.ProjectID, *b.UserID, kind
	}
	if len(want) == 0 {
		if existed {
			s.st.setAllocations(con, want)
		}
		c.reply(http.StatusNoContent, nil)
		return
	}
	for _, rp := range slices.Sorted(maps.Keys(want)) {
		if s.st.providers[rp] == nil {
			// The real server creates the consumer before this check and
			// does not roll it back: the consumer stays, without
			// allocations, and the next "consumer_generation": null fails.
			s.st.consumers[cu] = con
			c.fail(http.StatusBadRequest, "", "Allocation for resource provider '"+rp+"' that does not exist.")
			return
		}
	}
	if !s.fits(c, con, want) {
		return
	}
	con.project, con.user, con.kind = *b.ProjectID, *b.UserID, kind
	s.st.consumers[cu] = con
	s.st.setAllocations(con, want)
	c.reply(http.StatusNoContent, nil)
}

func (s *Server) consumerGenerationOK(c *call, con *consumer, got intField) bool {
	gotText := got.Raw
	if got.Null {
		gotText = "None"
	}
	switch {
	case con == nil && !got.Null:
		c.fail(http.StatusConflict, CodeConcurrentUpdate, "consumer generation conflict - expected null but got "+gotText)
	case con != nil && (got.Null || got.Value != con.gen):
		expected := strconv.FormatInt(s.st.sent(con.gen), 10)
		c.fail(http.StatusConflict, CodeConcurrentUpdate, "consumer generation conflict - expected "+expected+" but got "+gotText)
	default:
		return true
	}
	return false
}

// fits checks classes, inventory, unit constraints and capacity, ignoring
// what the consumer holds now (the real server deletes that first).
func (s *Server) fits(c *call, con *consumer, want map[string]map[string]int64) bool {
	for _, rp := range slices.Sorted(maps.Keys(want)) {
		for _, rc := range slices.Sorted(maps.Keys(want[rp])) {
			if !s.st.classes[rc] {
				c.fail(http.StatusBadRequest, "", "Unable to allocate inventory for consumer "+con.uuid+": No such resource class "+rc+".")
				return false
			}
		}
	}
	for _, rp := range slices.Sorted(maps.Keys(want)) {
		p := s.st.providers[rp]
		for _, rc := range slices.Sorted(maps.Keys(want[rp])) {
			n := want[rp][rc]
			inv, ok := p.inv[rc]
			where := "'" + rc + "' on resource provider '" + rp + "'"
			switch {
			case !ok:
				c.fail(http.StatusConflict, "", "Unable to allocate inventory: Inventory for "+where+" invalid.")
			case n < inv.MinUnit || n > inv.MaxUnit || n%inv.StepSize != 0:
				c.fail(http.StatusConflict, "", "Unable to allocate inventory: Unable to create allocation for "+where+". The requested amount would violate inventory constraints.")
			case float64(p.usage[rc]-con.allocs[rp][rc]+n) > inv.capacity():
				c.fail(http.StatusConflict, "", "Unable to allocate inventory: Unable to create allocation for "+where+". The requested amount would exceed the capacity.")
			default:
				continue
			}
			return false
		}
	}
	return true
}

func (s *Server) getAllocations(c *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	con := s.st.consumers[c.args[0]]
	if con == nil || len(con.allocs) == 0 {
		c.reply(http.StatusOK, map[string]any{"allocations": map[string]any{}})
		return
	}
	allocs := map[string]any{}
	for rp, res := range con.allocs {
		allocs[rp] = map[string]any{"resources": res, "generation": s.st.sent(s.st.providers[rp].gen)}
	}
	body := map[string]any{"allocations": allocs, "project_id": con.project, "user_id": con.user}
	if c.minor >= 28 {
		body["consumer_generation"] = s.st.sent(con.gen)
	}
	if c.minor >= 38 {
		body["consumer_type"] = con.kind
	}
	c.reply(http.StatusOK, body)
}

// deleteAllocations removes a consumer without bumping any provider
// generation, as observed on the real server.
func (s *Server) deleteAllocations(c *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	con := s.st.consumers[c.args[0]]
	if con == nil || len(con.allocs) == 0 {
		c.fail(http.StatusNotFound, "", "No allocations for consumer '"+c.args[0]+"'")
		return
	}
	s.st.dropConsumer(con)
	c.reply(http.StatusNoContent, nil)
}

func (s *Server) getProviderAllocations(c *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.provider(c, notFoundAllocations)
	if p == nil {
		return
	}
	allocs := map[string]any{}
	for cu, res := range p.consumers {
		allocs[cu] = map[string]any{"resources": res, "consumer_generation": s.st.sent(s.st.consumers[cu].gen)}
	}
	c.reply(http.StatusOK, map[string]any{"allocations": allocs, "resource_provider_generation": s.st.sent(p.gen)})
}
