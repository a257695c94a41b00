package placementfake

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

type link struct {
	Rel  string `json:"rel"`
	Href string `json:"href"`
}

type providerJSON struct {
	UUID       string  `json:"uuid"`
	Name       string  `json:"name"`
	Generation int64   `json:"generation"`
	Links      []link  `json:"links"`
	Parent     *string `json:"parent_provider_uuid"`
	Root       string  `json:"root_provider_uuid"`
}

func (s *Server) providerJSON(p *provider) providerJSON {
	return newProviderJSON(p.uuid, p.name, s.st.sent(p.gen))
}

func newProviderJSON(uuid, name string, gen int64) providerJSON {
	self := "/resource_providers/" + uuid
	return providerJSON{
		UUID: uuid, Name: name, Generation: gen, Root: uuid,
		Links: []link{
			{"self", self}, {"inventories", self + "/inventories"}, {"usages", self + "/usages"},
			{"aggregates", self + "/aggregates"}, {"traits", self + "/traits"},
			{"allocations", self + "/allocations"},
		},
	}
}

// The real handlers word "provider not found" differently; %[1]s is the uuid.
const (
	notFound            = "No resource provider with uuid %[1]s found"
	notFoundForDelete   = notFound + " for delete"
	notFoundTwice       = notFound + ": " + notFound  // usages, provider traits
	notFoundTwiceSpaced = notFound + " : " + notFound // inventories
	notFoundAllocations = "Resource provider '%[1]s' not found: " + notFound
)

// provider finds the provider in c.args[0] or answers 404 with msg. The
// caller holds s.mu.
func (s *Server) provider(c *call, msg string) *provider {
	p := s.st.providers[c.args[0]]
	if p == nil {
		c.fail(http.StatusNotFound, "", fmt.Sprintf(msg, c.args[0]))
	}
	return p
}

func (s *Server) getProvider(c *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.provider(c, notFound); p != nil {
		c.reply(http.StatusOK, s.providerJSON(p))
	}
}

type providerBody struct {
	Name   *string `json:"name"`
	UUID   *string `json:"uuid"`
	Parent *string `json:"parent_provider_uuid"`
}

func (s *Server) createProvider(c *call) {
	var b providerBody
	if !c.decode(&b) {
		return
	}
	if b.Name == nil {
		c.fail(http.StatusBadRequest, "", "JSON does not validate: 'name' is a required property")
		return
	}
	if len(*b.Name) > 200 {
		c.fail(http.StatusBadRequest, "", "JSON does not validate: '"+*b.Name+"' is too long")
		return
	}
	if b.Parent != nil {
		c.fail(http.StatusNotImplemented, "", "placementfake: nested providers are not implemented")
		return
	}
	uuid := newUUID()
	if b.UUID != nil && *b.UUID != "" {
		var ok bool
		if uuid, ok = normalUUID(*b.UUID); !ok {
			c.fail(http.StatusBadRequest, "", "JSON does not validate: '"+*b.UUID+"' is not a 'uuid'")
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// The uuid check comes first: that is what sqlite reports when both clash.
	if s.st.providers[uuid] != nil {
		c.fail(http.StatusConflict, CodeDuplicateName, "Conflicting resource provider uuid: "+uuid+" already exists.")
		return
	}
	if s.st.byName[*b.Name] != nil {
		c.fail(http.StatusConflict, CodeDuplicateName, "Conflicting resource provider name: "+*b.Name+" already exists.")
		return
	}
	p := s.st.addProvider(uuid, *b.Name)
	c.w.Header().Set("Location", "http://"+c.r.Host+"/resource_providers/"+uuid)
	if c.minor < 20 {
		c.reply(http.StatusCreated, nil)
		return
	}
	c.reply(http.StatusOK, s.providerJSON(p))
}

// updateProvider renames. It needs no generation and does not bump it.
func (s *Server) updateProvider(c *call) {
	var b providerBody
	if !c.decode(&b) {
		return
	}
	if b.UUID != nil {
		c.fail(http.StatusBadRequest, "", "JSON does not validate: Additional properties are not allowed ('uuid' was unexpected)")
		return
	}
	if b.Name == nil {
		c.fail(http.StatusBadRequest, "", "JSON does not validate: 'name' is a required property")
		return
	}
	if b.Parent != nil {
		c.fail(http.StatusNotImplemented, "", "placementfake: nested providers are not implemented")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.provider(c, notFound)
	if p == nil {
		return
	}
	if other := s.st.byName[*b.Name]; other != nil && other != p {
		c.fail(http.StatusConflict, CodeDuplicateName, "Conflicting resource provider "+*b.Name+" already exists.")
		return
	}
	delete(s.st.byName, p.name)
	p.name = *b.Name
	s.st.byName[p.name] = p
	c.reply(http.StatusOK, s.providerJSON(p))
}

func (s *Server) deleteProvider(c *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.provider(c, notFoundForDelete)
	if p == nil {
		return
	}
	if len(p.consumers) > 0 {
		c.fail(http.StatusConflict, CodeProviderInUse,
			"Unable to delete resource provider "+p.uuid+": Resource provider has allocations.")
		return
	}
	s.st.removeProvider(p)
	c.reply(http.StatusNoContent, nil)
}

// listProviders filters and copies under the lock, then encodes one
// provider at a time outside it: 100,000 providers cost one linear pass.
func (s *Server) listProviders(c *call) {
	s.mu.Lock()
	match, ok := s.providerFilter(c)
	if !ok {
		s.mu.Unlock()
		return
	}
	var ps []*provider
	for _, p := range s.st.providers {
		if match(p) {
			ps = append(ps, p)
		}
	}
	slices.SortFunc(ps, func(a, b *provider) int { return cmp.Compare(a.seq, b.seq) })
	type row struct {
		uuid, name string
		gen        int64
	}
	rows := make([]row, len(ps))
	for i, p := range ps {
		rows[i] = row{p.uuid, p.name, s.st.sent(p.gen)}
	}
	s.mu.Unlock()

	c.w.Header().Set("Content-Type", "application/json")
	c.w.WriteHeader(http.StatusOK)
	w := bufio.NewWriterSize(c.w, 64<<10)
	_, _ = w.WriteString(`{"resource_providers": [`)
	for i, r := range rows {
		if i > 0 {
			_, _ = w.WriteString(", ")
		}
		b, _ := json.Marshal(newProviderJSON(r.uuid, r.name, r.gen))
		_, _ = w.Write(b)
	}
	_, _ = w.WriteString("]}")
	_ = w.Flush()
}

// normalUUID accepts what oslo's is_uuid_like accepts (any case, dashes
// optional, braces, urn:uuid: prefix) and returns the dashed lower form.
func normalUUID(s string) (string, bool) {
	h := strings.ToLower(s)
	h = strings.NewReplacer("urn:", "", "uuid:", "", "-", "").Replace(h)
	h = strings.Trim(h, "{}")
	if len(h) != 32 {
		return "", false
	}
	if _, err := strconv.ParseUint(h[:16], 16, 64); err != nil {
		return "", false
	}
	if _, err := strconv.ParseUint(h[16:], 16, 64); err != nil {
		return "", false
	}
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], true
}
