package ops

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/hostabi"
)

// maxNodeWrites caps the writes kept per node for its detail view.
const maxNodeWrites = 8

// NodeRow is one node as the status page shows it, built from the
// engine's events of the newest cycle that listed nodes.
type NodeRow struct {
	UUID, Name string
	// State is "schedulable", a reservation reason, or what keeps the node
	// from being synced: quarantined, conflict, failed, deferred,
	// pending_deletion, blocked, kept, deleted.
	State     string
	Outcome   engine.Outcome
	Placement engine.Observed // as Placement held it after the cycle
	Source    *hostabi.Node   // as the plugin reported it; nil when not listed
	Writes    []WriteRow      // newest last
	// Stale marks a row an earlier cycle left: the newest cycle listed
	// the node but did not reach it (Placement stopped answering), or
	// could not list nodes at all. The page shows the last known table,
	// marked, rather than a table shrunk to the nodes it reached.
	Stale bool
}

// Why says what keeps the node from being schedulable, with the value
// that decides it, in explain's words ("maintenance = true",
// "quarantined (no_class): ..."); "" for a schedulable node.
func (r NodeRow) Why() string {
	if r.State == "schedulable" {
		return ""
	}
	return strings.TrimPrefix(Explain(r.Source, r.Outcome, nil).Verdict, "not schedulable: ")
}

// WriteRow is one write Placement accepted. RequestID and GlobalID name
// it in Placement's log (its answer's id, the cycle's global id).
type WriteRow struct {
	At                  time.Time
	Op                  string
	Before, After       string
	RequestID, GlobalID string
}

// ListingHealth is the last result of one listing (plugin or Placement).
type ListingHealth struct {
	What string
	At   time.Time
	Took time.Duration
	Err  string
}

// nodeTable gathers the rows of the cycle under way and keeps those of
// the newest cycle that listed nodes.
type nodeTable struct {
	mu       sync.Mutex
	building map[string]*NodeRow
	listing  []hostabi.Node // of the cycle under way
	rows     map[string]*NodeRow
	source   map[string]*hostabi.Node
	writes   map[string][]WriteRow
	health   map[string]ListingHealth
}

func stateOf(o engine.Outcome) string {
	switch o.Kind {
	case engine.KindCreated, engine.KindUpdated, engine.KindUnchanged:
		return cmp.Or(o.Reserved, "schedulable")
	}
	return string(o.Kind)
}

func (t *nodeTable) started() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.building, t.listing = make(map[string]*NodeRow, len(t.rows)), nil
}

func (t *nodeTable) observe(ev engine.Event, clock func() time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch ev := ev.(type) {
	case engine.Listed:
		if t.health == nil {
			t.health = map[string]ListingHealth{}
		}
		h := ListingHealth{What: ev.What, At: clock(), Took: ev.Took}
		if ev.Err != nil {
			h.Err = ev.Err.Error()
		}
		t.health[ev.What] = h
		if ev.What == "nodes" && ev.Err == nil {
			t.listing = ev.Nodes
		}
	case engine.ProviderOutcome:
		if t.building == nil {
			t.building = map[string]*NodeRow{}
		}
		o := ev.Outcome
		t.building[o.Node] = &NodeRow{UUID: o.Node, Name: o.Name, State: stateOf(o), Outcome: o, Placement: ev.Placement}
	case engine.ProviderWritten:
		if t.writes == nil {
			t.writes = map[string][]WriteRow{}
		}
		ws := append(t.writes[ev.Node], WriteRow{At: clock(), Op: string(ev.Op), Before: ev.GenerationBefore, After: ev.GenerationAfter,
			RequestID: ev.RequestID, GlobalID: ev.GlobalRequestID})
		t.writes[ev.Node] = ws[max(0, len(ws)-maxNodeWrites):]
	}
}

// finished makes the cycle's rows the table's. A node the cycle listed
// but did not reach keeps its last row, marked stale; a cycle that listed
// no nodes (a failed listing knows nothing about them) marks every row
// stale. Writes of nodes no longer in the table are forgotten.
func (t *nodeTable) finished() {
	t.mu.Lock()
	defer t.mu.Unlock()
	rows := t.building
	if rows == nil {
		rows = map[string]*NodeRow{}
	}
	listed := make(map[string]bool, len(t.listing))
	for i := range t.listing {
		listed[strings.ToLower(t.listing[i].UUID)] = true
	}
	for u, old := range t.rows {
		if _, ok := rows[u]; !ok && (t.listing == nil || listed[u]) {
			stale := *old // the table is read without the lock: copy, never modify
			stale.Stale = true
			rows[u] = &stale
		}
	}
	t.rows, t.building = rows, nil
	if t.listing != nil {
		t.source = make(map[string]*hostabi.Node, len(t.listing))
		for i := range t.listing {
			n := &t.listing[i]
			t.source[strings.ToLower(n.UUID)] = n
		}
	}
	t.listing = nil
	for u := range t.writes {
		if _, ok := t.rows[u]; !ok {
			delete(t.writes, u)
		}
	}
}

// NodeFilter selects rows: every non-empty field must match.
type NodeFilter struct {
	Query      string // a substring of the name or uuid
	State      string
	Reserved   string // a reservation reason
	Quarantine string // a quarantine reason code
	Pending    bool   // deletions waiting for their next proof
	Conflicts  bool
}

func (f NodeFilter) match(r *NodeRow) bool {
	q := strings.ToLower(f.Query)
	switch {
	case q != "" && !strings.Contains(strings.ToLower(r.Name), q) && !strings.Contains(r.UUID, q):
	case f.State != "" && r.State != f.State:
	case f.Reserved != "" && r.Outcome.Reserved != f.Reserved:
	case f.Quarantine != "" && (r.Outcome.Kind != engine.KindQuarantined || r.Outcome.Reason != f.Quarantine):
	case f.Pending && r.Outcome.Kind != engine.KindPendingDeletion:
	case f.Conflicts && r.Outcome.Kind != engine.KindConflict:
	default:
		return true
	}
	return false
}

// Facets counts the rows by each filter's values, for the filter menus.
type Facets struct {
	States, Reserved, Quarantine map[string]int
	Pending, Conflicts, Total    int
	Stale                        int // rows an earlier cycle left (NodeRow.Stale)
}

// Nodes returns the rows matching f, sorted by name then uuid, at most
// limit of them, with the number that matched and the facets of all.
func (o *Ops) Nodes(f NodeFilter, limit int) (rows []NodeRow, matched int, facets Facets) {
	// The table is replaced whole at a cycle's end, never modified: it is
	// read without the lock the cycle's observer takes.
	t := &o.nodes
	t.mu.Lock()
	table, source := t.rows, t.source
	t.mu.Unlock()
	facets = Facets{States: map[string]int{}, Reserved: map[string]int{}, Quarantine: map[string]int{}}
	var hits []*NodeRow
	for _, r := range table {
		facets.Total++
		if r.Stale {
			facets.Stale++
		}
		facets.States[r.State]++
		if r.Outcome.Reserved != "" {
			facets.Reserved[r.Outcome.Reserved]++
		}
		switch r.Outcome.Kind {
		case engine.KindQuarantined:
			facets.Quarantine[r.Outcome.Reason]++
		case engine.KindPendingDeletion:
			facets.Pending++
		case engine.KindConflict:
			facets.Conflicts++
		}
		if f.match(r) {
			hits = append(hits, r)
		}
	}
	slices.SortFunc(hits, func(a, b *NodeRow) int {
		return cmp.Or(cmp.Compare(cmp.Or(a.Name, "\uffff"), cmp.Or(b.Name, "\uffff")), cmp.Compare(a.UUID, b.UUID)) // named first
	})
	for _, r := range hits[:min(len(hits), limit)] {
		row := *r
		row.Source = source[strings.ToLower(r.UUID)] // for Why: explain's values
		rows = append(rows, row)
	}
	return rows, len(hits), facets
}

// Node returns one node's row, with what the plugin reported and its
// last writes.
func (o *Ops) Node(uuid string) (NodeRow, bool) {
	t := &o.nodes
	t.mu.Lock()
	defer t.mu.Unlock()
	uuid = strings.ToLower(uuid)
	r, ok := t.rows[uuid]
	if !ok {
		return NodeRow{}, false
	}
	row := *r
	row.Source = t.source[uuid]
	row.Writes = slices.Clone(t.writes[uuid])
	return row, true
}

// Listings returns the last result of each listing, plugin's first.
func (o *Ops) Listings() []ListingHealth {
	t := &o.nodes
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []ListingHealth
	for _, w := range []string{"nodes", "instances", "providers"} {
		if h, ok := t.health[w]; ok {
			out = append(out, h)
		}
	}
	return out
}
