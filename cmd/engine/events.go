package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/events"
	"github.com/rpengine/rpengine/internal/ops"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// worldEvents is a daemon setup's event source ([events], docs/EVENTS.md):
// the bus consumer, and what turns its batches into node syncs.
type worldEvents struct {
	src    *events.Source
	cancel context.CancelFunc
	m      *events.Metrics
	plugin *wasmhost.Plugin
	reader engine.NodeReader
	log    *slog.Logger

	hints chan events.Batch // the bus's batches and the probe's (probe.go)
	cool  *events.Cooldown  // spaces the reads of one node (events.node_cooldown)

	mu       sync.Mutex
	stats    ops.BusState
	held     map[string][]notice // the notification times of deferred nodes
	maxQueue int                 // events.max_queue: bounds a merged batch too
	kinds    events.LagKinds     // the lag histogram's kind label, bounded
}

var (
	eventMetricsMu sync.Mutex
	eventMetrics   = map[*ops.Ops]*events.Metrics{} // registered once per registry
)

func metricsFor(o *ops.Ops) *events.Metrics {
	eventMetricsMu.Lock()
	defer eventMetricsMu.Unlock()
	if m, ok := eventMetrics[o]; ok {
		return m
	}
	m := events.NewMetrics(o.Metrics.Registry())
	eventMetrics[o] = m
	return m
}

// startEvents connects the setup's event source, if [events] is set. The
// plugin must support both event operations: configured events that could
// never be used are a configuration error, said at load. Node syncs read
// through an instance of the plugin of their own, so that a notification
// never waits behind a full cycle's listing (engine/order.go).
func startEvents(ctx context.Context, cfg *config.Config, a *assembly, o *ops.Ops, log *slog.Logger) (*worldEvents, error) {
	if !cfg.Events.Enabled() {
		o.WatchBus(nil)
		return nil, nil
	}
	for _, op := range []string{hostabi.ExportMapEvents, hostabi.ExportReadNodes} {
		if !a.plugin.Supports(op) {
			return nil, fmt.Errorf("[events] is set but plugin %s does not support %s; remove [events] or use a plugin that reads events", a.plugin.Name(), op)
		}
	}
	plugin, err := loadPlugin(ctx, cfg, a.cloud, log)
	if err != nil {
		return nil, fmt.Errorf("[events]: the node syncs' instance of the plugin: %w", err)
	}
	m := metricsFor(o)
	opts := cfg.Events.Options()
	opts.Log, opts.Metrics = log, m
	src, err := events.New(opts)
	if err != nil {
		plugin.Close(ctx)
		return nil, err
	}
	ectx, cancel := context.WithCancel(context.Background())
	ev := &worldEvents{src: src, cancel: cancel, m: m, plugin: plugin, log: log, hints: make(chan events.Batch),
		reader: timedReader{plugin, o.Metrics}, stats: ops.BusState{Queue: cfg.Events.Queue},
		cool: events.NewCooldown(cfg.Events.NodeCooldown.D()), held: map[string][]notice{}, maxQueue: cfg.Events.MaxQueue}
	go src.Run(ectx)
	go ev.forward(ectx, ev.startProbe(ectx, cfg.Events))
	o.WatchBus(ev.state)
	return ev, nil
}

func (ev *worldEvents) stop() {
	if ev != nil {
		ev.cancel()
		ev.plugin.Close(context.Background())
	}
}

func (ev *worldEvents) state() ops.BusState {
	st := ev.src.State()
	ev.mu.Lock()
	defer ev.mu.Unlock()
	s := ev.stats
	s.Connected, s.Since, s.LastError, s.Connects = st.Connected, st.Since, st.LastError, st.Connects
	return s
}

// Hints, NodeSync and EventsLive make the setup a daemon.EventSetup.
func (w *daemonSetup) Hints() <-chan events.Batch {
	if w.ev == nil {
		return nil
	}
	return w.ev.hints
}

// SyncsBesideCycles: node syncs run while a full cycle lists the source.
func (w *daemonSetup) SyncsBesideCycles() bool { return w.ev != nil }

// EventsLive says the bus is connected.
func (w *daemonSetup) EventsLive() bool { return w.ev != nil && w.ev.src.State().Connected }

// NodeSync maps the batch to nodes through the plugin and syncs those
// nodes, with the nodes the probe found changed and those whose cooldown
// ended, in one node sync; it returns why a full cycle must run now, or
// "".
func (w *daemonSetup) NodeSync(ctx context.Context, b events.Batch) string {
	ev := w.ev
	if ev == nil {
		return ""
	}
	if b.Lost {
		return ev.fallback("events", "messages may have been missed: "+b.Why)
	}
	// The nodes of the messages it could read are synced even when some
	// could not be: the full cycle that follows covers those.
	scope := w.eng.Scope()
	uuids, stamps, unreadable := ev.mapBatch(ctx, b, scope)
	uuids = ev.cooldown(uuids, stamps)
	uuids = ev.withNodes(uuids, b.Nodes, scope, stamps)
	if len(uuids) > hostabi.MaxReadNodes {
		return ev.fallback("overflow", fmt.Sprintf("%d nodes in one batch, more than a node sync reads", len(uuids)))
	}
	var why string
	if len(uuids) > 0 {
		r := w.syncNodes(ctx, ev.reader, uuids) // observe_sync.go
		ev.synced(r, stamps)
		why = r.FullCycle
	}
	switch {
	case unreadable != "":
		return ev.fallback("unreadable", unreadable)
	case b.Overflow != "":
		return ev.fallback("probe", b.Overflow)
	case why != "":
		return ev.fallback("node_sync", why)
	}
	return ""
}

// withNodes adds to uuids the batch's nodes known changed without a
// message (the probe's, those whose cooldown ended) that this engine's
// partitions hold, with the notification times the cooldown kept.
func (ev *worldEvents) withNodes(uuids, nodes []string, scope engine.Scope, stamps map[string][]notice) []string {
	var mine []string
	for _, u := range nodes {
		if scope.HoldsPartitionOf(u) {
			mine = append(mine, u)
		}
	}
	ev.takeHeld(mine, stamps)
	return append(uuids, mine...)
}

// notice is one notification about a node: when the source says it
// happened, and its kind (the lag histogram's label).
type notice struct {
	at   time.Time
	kind string
}

// maxHeldTimes bounds the notification times kept for one deferred node.
const maxHeldTimes = 16

// cooldown returns the nodes to read now; the others, read less than
// events.node_cooldown ago, wait with their notification times until
// their cooldown ends (forward hands them on then).
func (ev *worldEvents) cooldown(uuids []string, stamps map[string][]notice) []string {
	read, deferred := ev.cool.Split(time.Now(), uuids)
	if len(deferred) == 0 {
		return read
	}
	ev.m.Deferred.Add(float64(len(deferred)))
	ev.mu.Lock()
	defer ev.mu.Unlock()
	for _, u := range deferred { // the times feed the lag histogram only: a few a node suffice
		ev.held[u] = append(ev.held[u], stamps[u]...)[:min(len(ev.held[u])+len(stamps[u]), maxHeldTimes)]
	}
	return read
}

// takeHeld moves the notification times of deferred nodes now read into
// stamps.
func (ev *worldEvents) takeHeld(uuids []string, stamps map[string][]notice) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	for _, u := range uuids {
		if ts, ok := ev.held[u]; ok {
			stamps[u] = append(stamps[u], ts...)
			delete(ev.held, u)
		}
	}
}

// mapBatch asks the plugin which nodes the messages concern, keeping the
// ones this engine's partitions hold (shards and conductor groups are
// known only once the node is read), and the notification times per node.
func (ev *worldEvents) mapBatch(ctx context.Context, b events.Batch, scope engine.Scope) (uuids []string, stamps map[string][]notice, unreadable string) {
	msgs := make([]hostabi.EventMessage, 0, len(b.Messages))
	for _, m := range b.Messages {
		msgs = append(msgs, hostabi.EventMessage{Body: string(m.Body), Topic: m.RoutingKey})
	}
	stamps = map[string][]notice{}
	for len(msgs) > 0 {
		part := msgs[:min(len(msgs), hostabi.MaxEventsPerCall)]
		msgs = msgs[len(part):]
		mapped, err := ev.plugin.MapEvents(ctx, part)
		if err != nil {
			ev.m.Failed.Add(float64(len(part)))
			unreadable = fmt.Sprintf("map_events: %v", err)
			continue
		}
		for i, e := range mapped {
			if e.Error != "" {
				ev.m.Failed.Inc()
				unreadable = fmt.Sprintf("message %q unreadable: %s", clipText(part[i].Body, 120), e.Error)
				continue
			}
			kept := 0
			for _, u := range e.Nodes {
				if !scope.HoldsPartitionOf(u) {
					continue
				}
				kept++
				if _, seen := stamps[u]; seen {
					ev.m.Coalesced.Inc()
				} else {
					uuids = append(uuids, u)
					stamps[u] = nil
				}
				if t, err := time.Parse(time.RFC3339Nano, e.Time); err == nil {
					stamps[u] = append(stamps[u], notice{t, e.Kind})
				}
			}
			if kept == 0 {
				ev.m.Ignored.Inc()
			}
		}
	}
	return uuids, stamps, unreadable
}

// synced records a node sync: its outcome, and the lag of every
// notification whose node it wrote, from the notification's time to the
// end of the write.
func (ev *worldEvents) synced(r engine.NodeSyncReport, stamps map[string][]notice) {
	ok := len(r.Errors) == 0
	ev.m.Syncs.WithLabelValues(map[bool]string{true: "ok", false: "failed"}[ok]).Inc()
	ev.m.SyncSize.Observe(float64(r.Asked))
	for _, u := range r.Written {
		for _, n := range stamps[u] {
			ev.m.Lag.WithLabelValues(ev.kinds.Label(n.kind)).Observe(max(0, r.End.Sub(n.at).Seconds()))
		}
	}
	ev.mu.Lock()
	ev.stats.Syncs++
	ev.stats.LastSync, ev.stats.LastSyncOK = r.End, ok
	ev.mu.Unlock()
	level := slog.LevelDebug
	if len(r.Written) > 0 || !ok {
		level = slog.LevelInfo
	}
	ev.log.Log(context.Background(), level, "node sync", "asked", r.Asked, "read", r.Read, "out_of_scope", r.OutOfScope,
		"written", len(r.Written), "missing", len(r.Missing), "errors", len(r.Errors),
		"placement_requests", r.PlacementRequests, "duration_ms", r.DurationMS)
	names := map[string]string{}
	for _, o := range r.Outcomes {
		names[o.Node] = o.Name
	}
	for _, e := range r.Errors {
		ev.log.Warn("node sync error", engine.NodeAttrs(e.Node, names[e.Node], "err", e.Message, "kind", e.Kind)...)
	}
}

// fallback counts a full cycle brought forward and says why.
func (ev *worldEvents) fallback(reason, why string) string {
	ev.m.Fallbacks.WithLabelValues(reason).Inc()
	ev.mu.Lock()
	ev.stats.Fallbacks++
	ev.stats.LastWhy = why
	ev.mu.Unlock()
	return why
}

// timedReader times the plugin's reads as the listings are timed.
type timedReader struct {
	p *wasmhost.Plugin
	m *ops.Metrics
}

func (t timedReader) ReadNodes(ctx context.Context, uuids []string) ([]hostabi.Node, error) {
	start := time.Now()
	n, err := t.p.ReadNodes(ctx, uuids)
	t.m.ObservePlugin("read_nodes", outcomeOf(err), time.Since(start))
	return n, err
}

func (t timedReader) ReadInstances(ctx context.Context, uuids []string) ([]hostabi.Instance, error) {
	start := time.Now()
	in, err := t.p.ReadInstances(ctx, uuids)
	t.m.ObservePlugin("read_instances", outcomeOf(err), time.Since(start))
	return in, err
}

func outcomeOf(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

func clipText(s string, n int) string {
	s = strings.ToValidUTF8(s, "?")
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// NodeSync under [coord]: first the coordinator's sync and fence, as
// for a cycle, so a node sync writes only what this engine holds. Beside
// a running cycle it keeps the scope that cycle's sync set (a node sync
// must not change it under the cycle) and runs fenced on the same
// assignment's lease; the engine orders the two runs' writes.
func (w *coordSetup) NodeSync(ctx context.Context, b events.Batch) string {
	if err := w.co.sameMembership(w.daemonSetup); err != nil {
		return err.Error()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cycling {
		fctx, cancel := w.co.c.Fence(ctx, w.co.last)
		defer cancel()
		return w.daemonSetup.NodeSync(fctx, b)
	}
	cctx, cancel, err := w.co.BeforeCycle(ctx, w.eng, w.pc)
	if err != nil {
		return "" // nothing held, or the coordination failed: the next cycle says so
	}
	defer cancel()
	return w.daemonSetup.NodeSync(cctx, b)
}

// FollowUp: with events, a cycle that found a node proven gone runs the
// next one once engine.delete_grace has passed (at least a second), not
// a full interval later, so a deletion Ironic announced reaches
// Placement after its two proofs, not after two full intervals.
func (w *daemonSetup) FollowUp(r engine.Report) time.Duration {
	if r.TakeOverLeft > 0 { // left for a waiting node sync: take the rest over next
		return 100 * time.Millisecond
	}
	if w.ev == nil || w.drift != nil { // observe mode: a plan's proofs are never kept
		return 0
	}
	for _, o := range r.Outcomes {
		if o.Kind == engine.KindPendingDeletion {
			return max(w.cfg.Engine.DeleteGrace.D(), time.Second)
		}
	}
	return 0
}
