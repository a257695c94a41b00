package ironic

import (
	"errors"
	"fmt"
	"hash/maphash"
	"strings"

	"github.com/rpengine/rpengine/hostabi"
)

// ListNodes returns every node in the scope of req, or an error: never a
// part. Each listing pages by marker, re-applying its filters; any failed
// page fails everything, except that a marker node deleted between two
// pages starts that listing over, at most MaxRestarts times. A node seen
// twice (pages shift under concurrent changes) is reported once, with the
// data seen last.
func (c *Client) ListNodes(req hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	v, err := c.negotiate()
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	if err := checkScope(v, req); err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	var all []Page
	for _, q := range queries(req) {
		pages, err := c.listQuery(q, v)
		if err != nil {
			return nil, fmt.Errorf("list nodes (%s): %w", q, err)
		}
		all = append(all, pages...)
	}
	nodes, dups, err := MergePages(all)
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	if dups > 0 {
		c.warnf("ironic: %d node(s) appeared more than once while listing; each is reported once", dups)
	}
	return nodes, nil
}

// errMarkerGone: the node a page started after no longer exists.
var errMarkerGone = errors.New("the marker node was deleted between two pages")

func (c *Client) listQuery(q query, v version) ([]Page, error) {
	for restarts := 0; ; restarts++ {
		nodes, err := c.pages(q, v)
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
func (c *Client) pages(q query, v version) ([]Page, error) {
	var out []Page
	marker := ""
	for page := 1; ; page++ {
		path := q.path(v, c.cfg.PageSize, marker)
		resp, err := c.get(path, v)
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
		p, err := c.decode(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("page %d: malformed body: %w", page, err)
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

// uuidTable is an open-addressing set of node indexes keyed by uuid,
// hashed with a per-process seed.
type uuidTable struct {
	slots []int32 // index+1; 0 is empty
	mask  uint64
	seed  maphash.Seed
}

func newUUIDTable(n int) *uuidTable {
	size := 1
	for size < 2*n {
		size <<= 1
	}
	return &uuidTable{slots: make([]int32, size), mask: uint64(size - 1), seed: maphash.MakeSeed()}
}

// insert records uuid at index next unless a node with it is at an index
// below; then it returns that index.
func (t *uuidTable) insert(nodes []hostabi.Node, uuid string, next int) (int, bool) {
	for h := maphash.String(t.seed, uuid) & t.mask; ; h = (h + 1) & t.mask {
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
