package engine_test

import (
	"context"
	"regexp"
	"sync"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
)

// Each write's event names Placement's id for that write's answer and
// the cycle's global id, so its log record joins Placement's log; the
// full reservation of a quarantined node's provider included.
func TestWritesCarryBothRequestIDs(t *testing.T) {
	r := newRig(t, 3)
	var mu sync.Mutex
	var ws []engine.ProviderWritten
	r.opts.Observer = engine.ObserverFunc(func(e engine.Event) {
		if w, ok := e.(engine.ProviderWritten); ok {
			mu.Lock()
			ws = append(ws, w)
			mu.Unlock()
		}
	})
	r.restart()
	global := placement.NewGlobalRequestID()
	if rep := r.eng.Cycle(placement.WithGlobalRequestID(context.Background(), global)); len(rep.Errors) > 0 {
		t.Fatal(rep.Errors)
	}
	id := regexp.MustCompile(`^req-[0-9a-f-]{36}$`)
	seen := map[string]bool{}
	for _, w := range ws {
		if w.GlobalRequestID != global || !id.MatchString(w.RequestID) || seen[w.RequestID] {
			t.Errorf("write %+v: want global %s and a request id of its own", w, global)
		}
		seen[w.RequestID] = true
	}
	if len(ws) < 3*3 { // create, inventory, traits for each node at least
		t.Fatalf("%d writes observed", len(ws))
	}

	// The reservation of a quarantined node's provider is a write too.
	ws = nil
	r.src.set(func(s *source) { s.nodes[0].ResourceClass = "" })
	global = placement.NewGlobalRequestID()
	r.eng.Cycle(placement.WithGlobalRequestID(context.Background(), global))
	if len(ws) != 1 || ws[0].Node != nodeUUID(0) || ws[0].Op != engine.OpInventory || ws[0].GlobalRequestID != global ||
		!id.MatchString(ws[0].RequestID) || seen[ws[0].RequestID] {
		t.Fatalf("quarantine's reservation: %+v", ws)
	}
}
