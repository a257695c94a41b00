package ironic

import (
	"errors"
	"fmt"
	"hash/maphash"
	"strings"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
)

// ListNodes returns every node in the scope of req, or an error: never a
// part. Each listing pages by marker, re-applying its filters; any failed
// page fails everything, except that a marker node deleted between two
// pages starts that listing over, at most MaxRestarts times. A node seen
// twice (pages shift under concurrent changes) is reported once, with the
// data seen last.
func (c *Client) ListNodes(req hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	if err := c.serve(req.NodeFields); err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	all, err := c.listPages(req, false)
	if err != nil {
		return nil, err
	}
	return c.merged(all)
}

// ListNodeRefs is ListNodes answered by reference (guest.RefLister): the
// same listing, the same checks and the same node kept per uuid, but
// named as records of the pages the host kept rather than built; the
// host builds the nodes from its own frames. When the host kept some
// page (one over its budget) it lists again, whole, and returns the
// nodes. The pages it reads by reference hold only their uuids and next
// link (uuidPage): the host keeps the rest (nodePage). A listing with optional node fields is never by reference
// (rpr1 does not carry them; the host offers it only without them).
func (c *Client) ListNodeRefs(req hostabi.ListNodesRequest) (*hostabi.NodeRefs, []hostabi.Node, error) {
	if !req.NodeFields.Empty() {
		nodes, err := c.ListNodes(req)
		return nil, nodes, err
	}
	c.want = nil
	all, err := c.listPages(req, c.project != nil)
	if errors.Is(err, errNotKept) {
		c.warnf("ironic: %v; listing again without answering by reference", err)
		all, err = c.listPages(req, false)
	}
	if err != nil {
		return nil, nil, err
	}
	refs, dups, err := MergeRefs(all)
	switch {
	case err != nil:
		return nil, nil, fmt.Errorf("list nodes: %w", err)
	case refs == nil:
		nodes, err := c.merged(all)
		return nil, nodes, err
	}
	c.warnDups(dups)
	return refs, nil, nil
}

// listPages reads every listing of req's scope to its end; byRef: the
// pages by reference (Client.ListNodeRefs).
func (c *Client) listPages(req hostabi.ListNodesRequest, byRef bool) ([]Page, error) {
	v, err := c.negotiate()
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	if err := checkScope(v, req); err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	if err := c.want.check(v); err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	var all []Page
	for _, q := range queries(req) {
		q.fields = c.want.fieldList(v)
		pages, err := c.listQuery(q, v, byRef)
		if err != nil {
			return nil, fmt.Errorf("list nodes (%s): %w", q, err)
		}
		all = append(all, pages...)
	}
	return all, nil
}

func (c *Client) merged(all []Page) ([]hostabi.Node, error) {
	nodes, dups, err := MergePages(all)
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	c.warnDups(dups)
	return nodes, nil
}

func (c *Client) warnDups(dups int) {
	if dups > 0 {
		c.warnf("ironic: %d node(s) appeared more than once while listing; each is reported once", dups)
	}
}

// errMarkerGone: the node a page started after no longer exists.
var errMarkerGone = errors.New("the marker node was deleted between two pages")

// errNotKept: the host did not keep a page asked by reference.
var errNotKept = errors.New("the host kept no projection of the page (over its budget)")

func (c *Client) listQuery(q query, v version, byRef bool) ([]Page, error) {
	for restarts := 0; ; restarts++ {
		nodes, err := c.pages(q, v, byRef)
		if !errors.Is(err, errMarkerGone) {
			return nodes, err
		}
		if restarts >= c.cfg.MaxRestarts {
			return nil, fmt.Errorf("%w, %d time(s) in a row; giving up", err, restarts+1)
		}
		// Restart from scratch: pages read before may describe nodes that
		// are gone now, and a listing is one snapshot or nothing.
		c.warnf("ironic: %v; restarting the listing (%s)", err, q)
	}
}

// pages reads one listing to the end. Pages stay compact (projected
// records) until MergePages turns them all into nodes at once.
func (c *Client) pages(q query, v version, byRef bool) ([]Page, error) {
	var out []Page
	marker := ""
	project, keep := c.projection(), (*guest.Projection)(nil)
	if byRef {
		project, keep = &uuidPage, c.project
	}
	paths := q.pager(v, c.cfg.PageSize)
	for page := 1; ; page++ {
		path := paths(marker)
		resp, err := c.getProjected(path, v, project, keep)
		if err != nil {
			return nil, fmt.Errorf("page %d: %w", page, err)
		}
		switch {
		case resp.Status == 404 && marker != "" && strings.Contains(faultString(resp.Body), marker):
			return nil, fmt.Errorf("page %d: %w (%s)", page, errMarkerGone, marker)
		case resp.Status == 406:
			c.ver = version{} // re-read the server's versions next time
			return nil, fmt.Errorf("page %d: %w", page, apiError(path, resp))
		case resp.Status != 200:
			return nil, fmt.Errorf("page %d: %w", page, apiError(path, resp))
		}
		if err := checkAnswered(path, resp, v); err != nil {
			return nil, fmt.Errorf("page %d: %w", page, err)
		}
		p, err := c.page(resp, byRef)
		if err != nil {
			return nil, fmt.Errorf("page %d: malformed body: %w", page, err)
		}
		if byRef && resp.Ref == 0 {
			return nil, fmt.Errorf("page %d: %w", page, errNotKept)
		}
		out = append(out, p)
		// Ironic links a next page whenever this one is full at its own
		// cap, which may be below ours; an empty page ends it regardless.
		n := p.Len()
		if n == 0 || p.Next() == "" && n < c.cfg.PageSize {
			return out, nil
		}
		last := p.UUID(n - 1)
		if last == "" {
			return nil, fmt.Errorf("page %d: malformed body: nodes[%d] has no uuid", page, n-1)
		}
		if last == marker {
			return nil, fmt.Errorf("page %d: the listing does not advance past %s", page, marker)
		}
		marker = last
	}
}

// page decodes one page: the host's projection of it, or its body.
// byRef: the projection is uuidPage's, the host kept nodePage's.
func (c *Client) page(resp guest.HTTPResponse, byRef bool) (Page, error) {
	switch {
	case resp.ProjectErr != nil:
		return nil, resp.ProjectErr
	case resp.Projected != nil:
		return projected{*resp.Projected, resp.Ref, byRef, c.want}, nil
	}
	return c.decodeBody(resp.Body)
}

// MergePages turns the pages into one slice of nodes, keeping one node per
// uuid (the last seen, at the place of the first) and counting the
// others. It allocates the result once and fills it straight from the
// pages, and finds duplicates with a flat table of indexes rather than a
// map: in a Wasm guest allocations and map operations cost several times
// more than natively (hostabi/RATIONALE.md, "JSON projection"). Ironic
// writes a node's uuid one way only (its database's canonical form), so
// the same node compares equal as is.
func MergePages(pages []Page) ([]hostabi.Node, int, error) {
	total := 0
	for _, p := range pages {
		total += p.Len()
	}
	out := make([]hostabi.Node, total)
	off := 0
	for i, p := range pages {
		if err := p.Fill(out[off : off+p.Len()]); err != nil {
			return nil, 0, fmt.Errorf("page %d: %w", i+1, err)
		}
		off += p.Len()
	}
	// Compact in place: only a duplicate moves anything.
	t := newUUIDTable(total)
	kept, dups := 0, 0
	for j := range out {
		if i, found := t.insert(out, out[j].UUID, kept); found {
			out[i] = out[j]
			dups++
			continue
		}
		if kept != j {
			out[kept] = out[j]
		}
		kept++
	}
	clear(out[kept:])
	return out[:kept], dups, nil
}

// uuidTable is an open-addressing set of node indexes keyed by uuid.
// It hashes with quickHash, seeded per table: in a Wasm guest maphash
// cost a third of the whole merge (its 128-bit multiplies are emulated
// there). Should a probe ever run past maxProbe (a listing whose uuids
// collide under the seed), the table is rebuilt with maphash, seeded per
// process, and stays so: the cost stays bounded whatever the uuids are.
type uuidTable struct {
	slots []int32 // index+1; 0 is empty
	mask  uint64
	seed  maphash.Seed
	quick uint64 // quickHash's seed; 0 once rebuilt with maphash
}

// maxProbe is the longest probe tolerated under quickHash: at half load
// a fair hash almost never needs more than a dozen.
const maxProbe = 64

// testQuickHash, when set by a test, replaces quickHash (to force collisions).
var testQuickHash func(string) uint64

func newUUIDTable(n int) *uuidTable {
	size := 1
	for size < 2*n {
		size <<= 1
	}
	t := &uuidTable{slots: make([]int32, size), mask: uint64(size - 1), seed: maphash.MakeSeed()}
	t.quick = maphash.String(t.seed, "quick") | 1
	return t
}

func (t *uuidTable) hash(uuid string) uint64 {
	switch {
	case t.quick == 0:
		return maphash.String(t.seed, uuid)
	case testQuickHash != nil:
		return testQuickHash(uuid)
	}
	return quickHash(t.quick, uuid)
}

// quickHash is a seeded multiply-xorshift hash of s, 8 bytes a step,
// using only 64-bit multiplies.
func quickHash(seed uint64, s string) uint64 {
	const m = 0xff51afd7ed558ccd
	h := seed ^ uint64(len(s))*m
	for ; len(s) >= 8; s = s[8:] {
		w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		h = (h ^ w) * m
		h ^= h >> 29
	}
	for i := range len(s) {
		h = (h ^ uint64(s[i])) * m
		h ^= h >> 29
	}
	h *= 0xc4ceb9fe1a85ec53
	return h ^ h>>32
}

// rehash rebuilds the table with maphash over the n distinct keys held.
func (t *uuidTable) rehash(n int, key func(i int) string) {
	t.quick = 0
	clear(t.slots)
	for i := range n {
		h := t.hash(key(i)) & t.mask
		for t.slots[h] != 0 {
			h = (h + 1) & t.mask
		}
		t.slots[h] = int32(i + 1)
	}
}

// insertAt is insert for a listing by reference: the node at index i
// is record at[i]&0xffffffff of page at[i]>>32 of recs.
func (t *uuidTable) insertAt(recs []guest.Records, at []uint64, uuid string, next int) (int, bool) {
	for h, n := t.hash(uuid)&t.mask, 0; ; h, n = (h+1)&t.mask, n+1 {
		if n == maxProbe && t.quick != 0 {
			t.rehash(next, func(i int) string { a := at[i]; return recs[a>>32].String(int(uint32(a)), fUUID) })
			return t.insertAt(recs, at, uuid, next)
		}
		i := int(t.slots[h]) - 1
		if i < 0 {
			t.slots[h] = int32(next + 1)
			return 0, false
		}
		if a := at[i]; recs[a>>32].String(int(uint32(a)), fUUID) == uuid {
			return i, true
		}
	}
}

// insert records uuid at index next unless a node with it is at an index
// below; then it returns that index.
func (t *uuidTable) insert(nodes []hostabi.Node, uuid string, next int) (int, bool) {
	for h, n := t.hash(uuid)&t.mask, 0; ; h, n = (h+1)&t.mask, n+1 {
		if n == maxProbe && t.quick != 0 {
			t.rehash(next, func(i int) string { return nodes[i].UUID })
			return t.insert(nodes, uuid, next)
		}
		i := int(t.slots[h]) - 1
		if i < 0 {
			t.slots[h] = int32(next + 1)
			return 0, false
		}
		if nodes[i].UUID == uuid {
			return i, true
		}
	}
}

// MergeRefs is MergePages by reference: the same node kept per uuid at
// the same place, named as (kept page, record) in runs instead of built.
// It returns nil refs when some page is not one the host kept. The uuids
// are read from the pages' records where they lie, never gathered in a
// slice of strings: in a Wasm guest that slice (160 KB of pointers per
// 10,000 nodes) cost its allocation, write barriers and a GC scan.
func MergeRefs(pages []Page) (*hostabi.NodeRefs, int, error) {
	total := 0
	recs, kept := make([]guest.Records, len(pages)), make([]uint32, len(pages))
	for i, p := range pages {
		pp, ok := p.(projected)
		if !ok || pp.ref == 0 {
			return nil, 0, nil
		}
		recs[i], kept[i] = pp.r, pp.ref
		total += p.Len()
	}
	at := make([]uint64, 0, total) // the node at each place: page<<32 | record
	t := newUUIDTable(total)
	dups := 0
	for i := range recs {
		r := &recs[i]
		for j := range r.Len() {
			u := r.String(j, fUUID)
			if u == "" { // absent, null or ""
				return nil, 0, fmt.Errorf("page %d: nodes[%d] has no uuid", i+1, j)
			}
			here := uint64(i)<<32 | uint64(j)
			if k, found := t.insertAt(recs, at, u, len(at)); found {
				at[k] = here
				dups++
				continue
			}
			at = append(at, here)
		}
	}
	refs := &hostabi.NodeRefs{Fields: nodeRefFields, Runs: make([]hostabi.NodeRun, 0, len(pages))}
	for _, a := range at {
		refs.Add(kept[a>>32], uint32(a))
	}
	return refs, dups, nil
}
