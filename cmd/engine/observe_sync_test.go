package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/ops"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// changedReader is the source after a change to some nodes: the nodes
// asked as listed, with change applied; no instance.
type changedReader struct {
	nodes  []hostabi.Node
	change func(*hostabi.Node)
}

func (s changedReader) ReadNodes(_ context.Context, uuids []string) ([]hostabi.Node, error) {
	var out []hostabi.Node
	for _, n := range s.nodes {
		if slices.Contains(uuids, strings.ToLower(n.UUID)) {
			s.change(&n)
			out = append(out, n)
		}
	}
	return out, nil
}

func (changedReader) ReadInstances(context.Context, []string) ([]hostabi.Instance, error) {
	return nil, nil
}

// In observe mode a node sync updates the drift of the nodes it read at
// once, not at the next full cycle, and writes nothing: a free node put
// in maintenance is reserved drift after one node sync; once the change
// is undone, the next node sync forgets it.
func TestObserveNodeSyncUpdatesDrift(t *testing.T) {
	fake := placementfake.New()
	defer fake.Close()
	cfg := daemonConfig(t, t.TempDir(), fmt.Sprintf("[placement]\nendpoint = %q\ntoken = \"admin\"\n", fake.URL()), "")
	run := startDaemon(t, cfg)
	run.waitFor("the providers written", func() bool { return len(fake.ProviderUUIDs()) == 12 })
	run.stop()
	ctx := t.Context()
	s, err := loadSetup(ctx, cfg, true, slog.New(slog.NewTextHandler(io.Discard, nil)), ops.New(time.Now), make(chan struct{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	w := s.(*daemonSetup)
	defer w.Close(ctx)
	if r := w.Cycle(ctx); len(r.Errors) > 0 || len(w.drift.lasting(20)) > 0 {
		t.Fatalf("observe cycle: errors %v, drift %v; want none after a run", r.Errors, w.drift.lasting(20))
	}
	nodes, err := w.plugin.ListNodes(ctx, hostabi.ListNodesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var free string
	for _, n := range nodes {
		if p, _ := fake.Provider(strings.ToLower(n.UUID)); free == "" && !n.Maintenance && n.InstanceUUID == "" && reservedNone(p) {
			free = strings.ToLower(n.UUID)
		}
	}
	fake.ResetRequests()
	maint := changedReader{nodes, func(n *hostabi.Node) { n.Maintenance = true }}
	w.syncNodes(ctx, maint, []string{free})
	if got := testutil.ToFloat64(w.drift.count.WithLabelValues(driftReserved)); got != 1 {
		t.Fatalf("reserved drift after the node sync: %v, want 1 (%s put in maintenance)", got, free)
	}
	if l := w.drift.lasting(5); len(l) != 1 || !strings.HasPrefix(l[0], free+" reserved since") {
		t.Fatalf("drift %v, want %s reserved", l, free)
	}
	w.syncNodes(ctx, changedReader{nodes, func(*hostabi.Node) {}}, []string{free})
	if l := w.drift.lasting(5); len(l) != 0 {
		t.Fatalf("drift %v after the change was undone, want none", l)
	}
	for _, r := range fake.Requests() {
		if r.Method != "GET" {
			t.Fatalf("observe node sync sent %s %s", r.Method, r.Path)
		}
	}
}

func reservedNone(p placementfake.ProviderState) bool {
	for _, inv := range p.Inventories {
		if inv.Reserved != 0 {
			return false
		}
	}
	return len(p.Inventories) > 0
}
