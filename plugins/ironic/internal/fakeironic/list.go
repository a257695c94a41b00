package fakeironic

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// version writes the version headers and returns the request's minor
// version, or -1 after answering 406.
func (s *Server) version(w http.ResponseWriter, r *http.Request) int {
	h := w.Header()
	h.Set("X-OpenStack-Ironic-API-Minimum-Version", "1.1")
	h.Set("X-OpenStack-Ironic-API-Maximum-Version", "1."+itoa(s.maxMinor))
	asked := r.Header.Get("X-OpenStack-Ironic-API-Version")
	minor := 1
	switch {
	case asked == "latest":
		minor = s.maxMinor
	case asked != "":
		maj, min, ok := strings.Cut(asked, ".")
		m, err := strconv.Atoi(min)
		if !ok || maj != "1" || err != nil || m < 1 || m > s.maxMinor {
			w.WriteHeader(http.StatusNotAcceptable)
			w.Write(versionErrorBody("Version " + asked + " was requested but the minor version is not supported by this service. " +
				"The supported version range is: [1.1, 1." + itoa(s.maxMinor) + "]."))
			return -1
		}
		minor = m
	}
	h.Set("X-OpenStack-Ironic-API-Version", "1."+itoa(minor))
	return minor
}

func notAcceptable(w http.ResponseWriter, need string) {
	w.WriteHeader(http.StatusNotAcceptable)
	w.Write(errorBody("Request not acceptable. The minimal required API version should be " + need))
}

func (s *Server) fields(r *http.Request, minor int) (fields []string, needVersion string) {
	raw := r.URL.Query().Get("fields")
	if raw == "" {
		return []string{"uuid", "instance_uuid", "maintenance", "power_state", "provision_state", "name"}, ""
	}
	if minor < 8 {
		return nil, "1.8"
	}
	for _, f := range strings.Split(raw, ",") {
		since, ok := fieldSince[f]
		if !ok || since > minor {
			return nil, "1." + itoa(max(since, 8))
		}
		fields = append(fields, f)
	}
	return fields, ""
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	minor := s.version(w, r)
	if minor < 0 {
		return
	}
	s.mu.Lock()
	s.lists++
	n, hook := s.lists, s.BeforeList
	s.mu.Unlock()
	if hook != nil && hook(w, r, n) {
		return
	}
	q := r.URL.Query()
	if (q.Has("shard") || q.Has("sharded")) && minor < 82 {
		notAcceptable(w, "1.82")
		return
	}
	if q.Has("conductor_group") && minor < 46 {
		notAcceptable(w, "1.46")
		return
	}
	fields, need := s.fields(r, minor)
	if need != "" {
		notAcceptable(w, need)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := r.URL.RawQuery
	if body, ok := s.cache[key]; ok {
		w.Write(body)
		return
	}
	limit := s.maxLimit
	if l, err := strconv.Atoi(q.Get("limit")); err == nil && l > 0 && l < limit {
		limit = l
	}
	start := 0
	if m := q.Get("marker"); m != "" {
		i := slices.IndexFunc(s.sorted(q), func(n Node) bool { return n.UUID == m })
		if i < 0 {
			w.WriteHeader(http.StatusNotFound)
			w.Write(errorBody("Node " + m + " could not be found."))
			return
		}
		start = i + 1
	}
	body := s.page(s.sorted(q), q, start, limit, fields)
	s.cache[key] = body
	w.Write(body)
}

// sorted is the nodes in the listing's order: by id, or by updated_at,
// newest first (null last, as MariaDB sorts them descending; asc the
// reverse), as asked.
// The caller holds s.mu.
func (s *Server) sorted(q url.Values) []Node {
	if q.Get("sort_key") != "updated_at" {
		return s.nodes
	}
	nodes := slices.Clone(s.nodes)
	slices.SortStableFunc(nodes, func(a, b Node) int {
		if q.Get("sort_dir") == "asc" {
			return strings.Compare(a.UpdatedAt, b.UpdatedAt)
		}
		return strings.Compare(b.UpdatedAt, a.UpdatedAt)
	})
	return nodes
}

// page is the body of one page of the listing of nodes from node start;
// the caller holds s.mu.
func (s *Server) page(nodes []Node, q url.Values, start, limit int, fields []string) []byte {
	body := []byte(`{"nodes": [`)
	count, last := 0, ""
	for i := start; i < len(nodes) && count < limit; i++ {
		nd := &nodes[i]
		if !match(nd, q) {
			continue
		}
		if count > 0 {
			body = append(body, ", "...)
		}
		body = appendNode(body, nd, fields, s.base)
		count, last = count+1, nd.UUID
	}
	body = append(body, ']')
	if count == limit { // Ironic links a next page whenever this one is full
		body = append(body, `, "next": "`...)
		body = append(body, s.base+"/v1/nodes?sort_key=id&sort_dir=asc&fields="+strings.Join(fields, ",")+
			"&limit="+itoa(limit)+"&marker="+last...)
		body = append(body, '"')
	}
	body = append(body, '}')
	return body
}

func match(n *Node, q map[string][]string) bool {
	get := func(k string) (string, bool) {
		v, ok := q[k]
		if !ok || len(v) == 0 {
			return "", false
		}
		return v[0], true
	}
	if g, ok := get("conductor_group"); ok && !strings.EqualFold(g, n.ConductorGroup) {
		return false
	}
	if sh, ok := get("shard"); ok && (n.Shard == "" || !slices.Contains(strings.Split(sh, ","), n.Shard)) {
		return false
	}
	if v, ok := get("sharded"); ok && (v == "true") != (n.Shard != "") {
		return false
	}
	return true
}

func itoa(i int) string { return strconv.Itoa(i) }

// detail answers GET /v1/nodes/detail sorted by updated_at, newest
// first (null last, as MariaDB sorts them descending): every field the
// version serves, and updated_at. Only that sort is served.
func (s *Server) detail(w http.ResponseWriter, r *http.Request) {
	minor := s.version(w, r)
	if minor < 0 {
		return
	}
	q := r.URL.Query()
	if q.Get("sort_key") != "updated_at" || q.Get("sort_dir") != "desc" || q.Has("fields") {
		w.WriteHeader(http.StatusBadRequest)
		w.Write(errorBody("the fake serves /v1/nodes/detail sorted by updated_at desc only, without fields"))
		return
	}
	var fields []string
	for f, since := range fieldSince {
		if since <= minor {
			fields = append(fields, f)
		}
	}
	slices.Sort(fields)
	fields = append(fields, "updated_at")
	s.mu.Lock()
	defer s.mu.Unlock()
	nodes := s.sorted(q)
	limit := s.maxLimit
	if l, err := strconv.Atoi(q.Get("limit")); err == nil && l > 0 && l < limit {
		limit = l
	}
	body := []byte(`{"nodes": [`)
	for i := range min(limit, len(nodes)) {
		if i > 0 {
			body = append(body, ", "...)
		}
		body = appendNode(body, &nodes[i], fields, s.base)
	}
	w.Write(append(body, "]}"...))
}
