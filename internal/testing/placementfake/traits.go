package placementfake

import (
	"maps"
	"net/http"
	"slices"
	"strings"
)

func (s *Server) listClasses(c *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(s.st.classes)) {
		out = append(out, classJSON(name))
	}
	c.reply(http.StatusOK, map[string]any{"resource_classes": out})
}

func classJSON(name string) map[string]any {
	return map[string]any{"name": name, "links": []link{{"self", "/resource_classes/" + name}}}
}

func (s *Server) getClass(c *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.st.classes[c.args[0]] {
		c.fail(http.StatusNotFound, "", "No such resource class "+c.args[0]+".")
		return
	}
	c.reply(http.StatusOK, classJSON(c.args[0]))
}

// putClass is the bodiless create-or-check of 1.7+: 201, then 204.
func (s *Server) putClass(c *call) {
	name := c.args[0]
	if !validCustomName(name) {
		c.fail(http.StatusBadRequest, "", "JSON does not validate: '"+name+"' does not match '^CUSTOM_[A-Z0-9_]+$'")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.created(c, s.st.classes, name, "/resource_classes/")
}

// created adds name to set: 201 with a Location, or 204 if it was there.
func (s *Server) created(c *call, set map[string]bool, name, prefix string) {
	if set[name] {
		c.reply(http.StatusNoContent, nil)
		return
	}
	set[name] = true
	c.w.Header().Set("Location", "http://"+c.r.Host+prefix+name)
	c.w.Header().Set("Content-Length", "0")
	c.reply(http.StatusCreated, nil)
}

func (s *Server) listTraits(c *call) {
	q := c.r.URL.Query()
	name := q.Get("name")
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []string{}
	for _, t := range slices.Sorted(maps.Keys(s.st.traits)) {
		if rest, ok := strings.CutPrefix(name, "startswith:"); ok && !strings.HasPrefix(t, rest) {
			continue
		}
		if rest, ok := strings.CutPrefix(name, "in:"); ok && !slices.Contains(strings.Split(rest, ","), t) {
			continue
		}
		out = append(out, t)
	}
	c.reply(http.StatusOK, map[string]any{"traits": out})
}

func (s *Server) getTrait(c *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.st.traits[c.args[0]] {
		c.fail(http.StatusNotFound, "", "No such trait(s): "+c.args[0]+".")
		return
	}
	c.reply(http.StatusNoContent, nil)
}

func (s *Server) putTrait(c *call) {
	name := c.args[0]
	if !validCustomName(name) {
		c.fail(http.StatusBadRequest, "", `The trait is invalid. A valid trait must be no longer than 255 characters, start with the prefix "CUSTOM_" and use following characters: "A"-"Z", "0"-"9" and "_"`)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.created(c, s.st.traits, name, "/traits/")
}

func (s *Server) getProviderTraits(c *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.provider(c, notFoundTwice); p != nil {
		c.reply(http.StatusOK, map[string]any{
			"traits":                       append([]string{}, slices.Sorted(maps.Keys(p.traits))...), // [] when empty, as Placement sends
			"resource_provider_generation": s.st.sent(p.gen),
		})
	}
}

// putProviderTraits: schema, provider, generation, unknown traits. An
// identical set does not bump the generation (the real code returns early).
func (s *Server) putProviderTraits(c *call) {
	var b struct {
		Generation intField  `json:"resource_provider_generation"`
		Traits     *[]string `json:"traits"`
	}
	if !c.decode(&b) {
		return
	}
	if b.Traits == nil {
		c.fail(http.StatusBadRequest, "", "JSON does not validate: 'traits' is a required property")
		return
	}
	if !b.Generation.check(c, "resource_provider_generation") {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.provider(c, notFound)
	if p == nil {
		return
	}
	if b.Generation.Value != p.gen {
		c.fail(http.StatusConflict, CodeConcurrentUpdate, "Resource provider's generation already changed. Please update the generation and try again.")
		return
	}
	want := map[string]bool{}
	var unknown []string
	for _, t := range *b.Traits {
		if !s.st.traits[t] {
			unknown = append(unknown, t)
		}
		want[t] = true
	}
	if len(unknown) > 0 {
		c.fail(http.StatusBadRequest, "", "No such trait "+strings.Join(unknown, ", "))
		return
	}
	if !maps.Equal(want, p.traits) {
		p.traits = want
		s.st.bump(p)
	}
	c.reply(http.StatusOK, map[string]any{
		"traits":                       append([]string{}, slices.Sorted(maps.Keys(p.traits))...), // [] when empty, as Placement sends
		"resource_provider_generation": s.st.sent(p.gen),
	})
}

// deleteProviderTraits has no generation; it bumps only if there were traits.
func (s *Server) deleteProviderTraits(c *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.provider(c, notFound)
	if p == nil {
		return
	}
	if len(p.traits) > 0 {
		p.traits = map[string]bool{}
		s.st.bump(p)
	}
	c.reply(http.StatusNoContent, nil)
}

func (s *Server) getAggregates(c *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.provider(c, notFound); p != nil {
		s.replyAggregates(c, p, slices.Sorted(maps.Keys(p.aggs)))
	}
}

func (s *Server) replyAggregates(c *call, p *provider, aggs []string) {
	body := map[string]any{"aggregates": append([]string{}, aggs...)} // [] when empty, as Placement sends
	if c.minor >= 19 {
		body["resource_provider_generation"] = s.st.sent(p.gen)
	}
	c.reply(http.StatusOK, body)
}

// putAggregates: from 1.19 the body carries the generation and every
// success bumps it, even for an identical set; before 1.19 it is a bare
// list and nothing is bumped.
func (s *Server) putAggregates(c *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.provider(c, notFound)
	if p == nil {
		return
	}
	var b struct {
		Generation intField  `json:"resource_provider_generation"`
		Aggregates *[]string `json:"aggregates"`
	}
	var aggs []string
	if c.minor < 19 {
		if !c.decode(&aggs) {
			return
		}
	} else {
		if !c.decode(&b) {
			return
		}
		if b.Aggregates == nil {
			c.fail(http.StatusBadRequest, "", "JSON does not validate: 'aggregates' is a required property")
			return
		}
		if !b.Generation.check(c, "resource_provider_generation") {
			return
		}
		aggs = *b.Aggregates
	}
	set := map[string]bool{}
	for _, a := range aggs {
		if _, ok := normalUUID(a); !ok {
			c.fail(http.StatusBadRequest, "", "JSON does not validate: '"+a+"' is not a 'uuid'")
			return
		}
		if set[a] {
			c.fail(http.StatusBadRequest, "", "JSON does not validate: "+pyList(aggs)+" has non-unique elements")
			return
		}
		set[a] = true
	}
	if c.minor >= 19 {
		if b.Generation.Value != p.gen {
			c.fail(http.StatusConflict, CodeConcurrentUpdate, "Resource provider's generation already changed. Please update the generation and try again.")
			return
		}
		s.st.bump(p)
	}
	p.aggs = set
	if aggs == nil {
		aggs = []string{}
	}
	s.replyAggregates(c, p, aggs)
}
