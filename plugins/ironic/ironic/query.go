package ironic

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/rpengine/rpengine/hostabi"
)

// query is one filtered listing; a scope may need several (Ironic filters
// by one conductor group at a time, and unsharded nodes need sharded=false).
type query struct {
	group     *string // nil: any conductor group; "" is the default group
	shards    []string
	unsharded bool
	uuidOnly  bool   // every node's uuid alone: deletion proofs (confirm.go)
	fields    string // fields= ("": the listing's own, nodeFields)
}

// queries splits a scope into listings whose union is exactly the scope.
func queries(req hostabi.ListNodesRequest) []query {
	var shardQs []query
	if len(req.Shards) == 0 {
		shardQs = []query{{}}
	} else {
		named := slices.DeleteFunc(slices.Clone(req.Shards), func(s string) bool { return s == "" })
		slices.Sort(named)
		named = slices.Compact(named)
		if len(named) > 0 {
			shardQs = append(shardQs, query{shards: named})
		}
		if len(named) < len(req.Shards) && slices.Contains(req.Shards, "") {
			shardQs = append(shardQs, query{unsharded: true})
		}
	}
	if len(req.ConductorGroups) == 0 {
		return shardQs
	}
	groups := slices.Clone(req.ConductorGroups)
	slices.Sort(groups)
	var out []query
	for _, g := range slices.Compact(groups) {
		for _, q := range shardQs {
			q.group = &g
			out = append(out, q)
		}
	}
	return out
}

// path is the request for one page: the fields the engine needs, sorted
// by id, and the query's own filters on every page. Ironic's next link
// keeps only sort, fields, limit and marker, so it is never followed.
func (q query) path(v version, limit int, marker string) string {
	p := url.Values{}
	p.Set("fields", strings.Join(nodeFields(v), ","))
	if q.fields != "" {
		p.Set("fields", q.fields)
	}
	if q.uuidOnly {
		p.Set("fields", "uuid")
	}
	p.Set("limit", strconv.Itoa(limit))
	p.Set("sort_key", "id")
	p.Set("sort_dir", "asc")
	if marker != "" {
		p.Set("marker", marker)
	}
	if q.group != nil {
		p.Set("conductor_group", *q.group) // "" selects the default group
	}
	if len(q.shards) > 0 {
		p.Set("shard", strings.Join(q.shards, ","))
	}
	if q.unsharded {
		p.Set("sharded", "false")
	}
	return nodesPath(p)
}

// nodesPath is a listing request with query p, commas kept readable
// (Ironic splits lists on them either way).
func nodesPath(p url.Values) string {
	return "/v1/nodes?" + strings.ReplaceAll(p.Encode(), "%2C", ",")
}

// pager returns q.path for any marker at v and limit, encoding the
// query once: a listing asks it on every page, and url.Values' map,
// sorting and escaping cost a Wasm guest tens of microseconds each time.
// The marker's place is found by a placeholder no encoded value can hold
// ("=" is escaped in values).
func (q query) pager(v version, limit int) func(marker string) string {
	const hold = "&marker=MARKER"
	first, withMarker := q.path(v, limit, ""), q.path(v, limit, "MARKER")
	before, after, ok := strings.Cut(withMarker, hold)
	if !ok {
		return func(marker string) string { return q.path(v, limit, marker) }
	}
	return func(marker string) string {
		if marker == "" {
			return first
		}
		return before + "&marker=" + strings.ReplaceAll(url.QueryEscape(marker), "%2C", ",") + after
	}
}

func (q query) String() string {
	var parts []string
	if q.group != nil {
		parts = append(parts, "conductor_group="+strconv.Quote(*q.group))
	}
	if len(q.shards) > 0 {
		parts = append(parts, "shard="+strings.Join(q.shards, ","))
	}
	if q.unsharded {
		parts = append(parts, "sharded=false")
	}
	if q.uuidOnly {
		parts = append(parts, "uuids only")
	}
	if len(parts) == 0 {
		return "all nodes"
	}
	return strings.Join(parts, " ")
}
