package placementfake

import (
	"net/http"
	"slices"
	"strings"
)

// providerFilter turns the GET /resource_providers query into a predicate,
// or answers 400/501. The caller holds s.mu.
func (s *Server) providerFilter(c *call) (func(*provider) bool, bool) {
	q := c.r.URL.Query()
	bad := func(msg string) (func(*provider) bool, bool) {
		c.fail(http.StatusBadRequest, "", "Invalid query string parameters: "+msg)
		return nil, false
	}
	var tests []func(*provider) bool
	for key := range q {
		switch key {
		case "name", "uuid", "in_tree", "member_of", "required", "resources":
		default:
			return bad("Additional properties are not allowed ('" + key + "' was unexpected)")
		}
	}
	if v := q.Get("name"); v != "" {
		tests = append(tests, func(p *provider) bool { return p.name == v })
	}
	for _, key := range []string{"uuid", "in_tree"} {
		v, ok := q[key]
		if !ok {
			continue
		}
		if _, valid := normalUUID(v[0]); !valid {
			return bad("'" + v[0] + "' is not a 'uuid'")
		}
		// The database compares the raw string: a dashless uuid finds nothing.
		want := v[0]
		tests = append(tests, func(p *provider) bool { return p.uuid == want })
	}
	for _, v := range q["member_of"] {
		t, msg := s.memberOf(v, c.minor)
		if t == nil {
			return bad(msg)
		}
		tests = append(tests, t)
	}
	if v, ok := q["resources"]; ok {
		t, ok := s.withResources(c, v[0])
		if !ok {
			return nil, false
		}
		tests = append(tests, t)
	}
	for _, v := range q["required"] {
		t, ok := s.requiredTraits(c, v)
		if !ok {
			return nil, false
		}
		tests = append(tests, t)
	}
	return func(p *provider) bool {
		for _, t := range tests {
			if !t(p) {
				return false
			}
		}
		return true
	}, true
}

// memberOf handles "UUID", "in:U1,U2" and, from 1.32, "!UUID" or "!in:...".
func (s *Server) memberOf(v string, minor int) (func(*provider) bool, string) {
	forbid := false
	if minor >= 32 && strings.HasPrefix(v, "!") {
		forbid, v = true, v[1:]
	}
	list := []string{v}
	if rest, ok := strings.CutPrefix(v, "in:"); ok {
		list = strings.Split(rest, ",")
	}
	for _, u := range list {
		if _, ok := normalUUID(u); !ok {
			return nil, "Expected 'member_of' parameter to contain valid UUID(s). Got: " + v
		}
	}
	return func(p *provider) bool {
		return slices.ContainsFunc(list, func(a string) bool { return p.aggs[a] }) != forbid
	}, ""
}

// requiredTraits handles "A,!B" and, at 1.39, "in:A,B" (any of).
func (s *Server) requiredTraits(c *call, v string) (func(*provider) bool, bool) {
	anyOf := false
	if rest, ok := strings.CutPrefix(v, "in:"); ok && c.minor >= 39 {
		anyOf, v = true, rest
	}
	var want, forbid, unknown []string
	for _, t := range strings.Split(v, ",") {
		name := t
		if c.minor >= 22 && !anyOf {
			name = strings.TrimPrefix(t, "!")
		}
		if name == "" {
			c.fail(http.StatusBadRequest, "", "Invalid query string parameters: Expected 'required' parameter value of the form: HW_CPU_X86_VMX,!CUSTOM_MAGIC. Got an empty trait in: "+v)
			return nil, false
		}
		if !s.st.traits[name] {
			unknown = append(unknown, name)
		}
		if name != t {
			forbid = append(forbid, name)
		} else {
			want = append(want, name)
		}
	}
	if len(unknown) > 0 {
		c.fail(http.StatusBadRequest, "", "Invalid trait(s) in \"required\" parameter: No such trait(s): "+strings.Join(unknown, ", ")+".")
		return nil, false
	}
	return func(p *provider) bool {
		if anyOf {
			return slices.ContainsFunc(want, func(t string) bool { return p.traits[t] })
		}
		for _, t := range want {
			if !p.traits[t] {
				return false
			}
		}
		for _, t := range forbid {
			if p.traits[t] {
				return false
			}
		}
		return true
	}, true
}
