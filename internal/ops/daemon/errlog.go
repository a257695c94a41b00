package daemon

import (
	"log/slog"
	"regexp"
	"time"

	"github.com/rpengine/rpengine/engine"
)

// errorRepeat is how often an error that lasts is logged again: a node
// quarantined for a day logs a few hundred lines, not one per cycle.
const errorRepeat = 5 * time.Minute

// lasting is one error seen in consecutive cycles.
type lasting struct {
	since, logged time.Time
	cycles        int
	e             engine.Error
	name          string
}

// errorLog logs a cycle's errors when they start, at most every
// errorRepeat while they last, and when they clear. An error is the same
// while its kind and node are (its message may name generations).
type errorLog struct {
	open map[string]*lasting
}

func errorKey(e engine.Error) string {
	if e.Node != "" {
		return string(e.Kind) + "/" + e.Node
	}
	// Placement's and the cycle's request ids are new every cycle: a
	// listing that keeps failing is one error.
	return string(e.Kind) + "/" + requestIDs.ReplaceAllString(e.Message, "req-")
}

var requestIDs = regexp.MustCompile(`req-[0-9a-fA-F-]{36}`)

// record logs what changed with this cycle's errors, at now.
func (l *errorLog) record(log *slog.Logger, r engine.Report, now time.Time) {
	names := make(map[string]string, len(r.Outcomes))
	for _, o := range r.Outcomes {
		if o.Name != "" {
			names[o.Node] = o.Name
		}
	}
	seen := make(map[string]bool, len(r.Errors))
	for _, e := range r.Errors {
		k := errorKey(e)
		if seen[k] {
			continue
		}
		seen[k] = true
		x, ok := l.open[k]
		switch {
		case !ok:
			if l.open == nil {
				l.open = map[string]*lasting{}
			}
			x = &lasting{since: now, logged: now, e: e, name: names[e.Node]}
			l.open[k] = x
			log.Error("cycle error", nodeAttrs(e, x.name, "err", e.Message, "kind", e.Kind)...)
		case now.Sub(x.logged) >= errorRepeat:
			x.logged = now
			log.Error("cycle error persists", nodeAttrs(e, x.name, "err", e.Message, "kind", e.Kind,
				"since", x.since.UTC().Format(time.RFC3339), "cycles", x.cycles+1)...)
		}
		x.cycles++
		x.e = e
	}
	for k, x := range l.open {
		if !seen[k] {
			log.Info("cycle error cleared", nodeAttrs(x.e, x.name, "kind", x.e.Kind,
				"since", x.since.UTC().Format(time.RFC3339), "cycles", x.cycles)...)
			delete(l.open, k)
		}
	}
}

// nodeAttrs adds the node's uuid and name to a record about one node;
// a record about the whole cycle has neither.
func nodeAttrs(e engine.Error, name string, attrs ...any) []any {
	if e.Node == "" {
		return attrs
	}
	attrs = append(attrs, "node", e.Node)
	if name != "" {
		attrs = append(attrs, "node_name", name)
	}
	return attrs
}
