package main

import (
	"context"
	"fmt"
	"time"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/events"
)

// The probe for changes the bus does not announce (events.probe_interval,
// docs/EVENTS.md): every period, the plugin's recent_nodes; the nodes
// whose change stamp is new are synced as a notification's would be.

// forward hands the bus's batches, the probe's and the nodes whose
// cooldown ended (events.node_cooldown) on to the loop. What arrives
// while the loop is busy (a node sync, a full cycle's write) is merged
// into one batch, handed on as soon as the loop is free: a slow sync
// makes the next batch larger, not the queue longer.
func (ev *worldEvents) forward(ctx context.Context, probes <-chan events.Batch) {
	var pending events.Batch
	has := false
	for {
		var out chan<- events.Batch
		if has {
			out = ev.hints
		}
		var b events.Batch
		select {
		case <-ctx.Done():
			return
		case b = <-ev.src.Batches():
		case b = <-probes:
		case <-ev.cool.Wake():
			continue // a node deferred: look at its due time again
		case <-ev.dueTimer():
			if b.Nodes = ev.cool.Due(time.Now()); len(b.Nodes) == 0 {
				continue
			}
		case out <- pending:
			pending, has = events.Batch{}, false
			continue
		}
		pending.Merge(b, ev.maxQueue)
		has = true
	}
}

// dueTimer fires when the earliest deferred node is due; nil (never)
// when none is.
func (ev *worldEvents) dueTimer() <-chan time.Time {
	next, ok := ev.cool.Next()
	if !ok {
		return nil
	}
	return time.After(time.Until(next))
}

// startProbe runs the probe if configured and the plugin can answer it;
// its batches go to the returned channel (nil: no probe).
func (ev *worldEvents) startProbe(ctx context.Context, e config.Events) <-chan events.Batch {
	if e.ProbeInterval.D() <= 0 {
		return nil
	}
	if !ev.plugin.Supports(hostabi.ExportRecentNodes) {
		ev.log.Info("events: no probe of recently changed nodes: the plugin does not support it",
			"plugin", ev.plugin.Name(), "operation", hostabi.ExportRecentNodes)
		return nil
	}
	out := make(chan events.Batch)
	go ev.probeLoop(ctx, e.ProbeInterval.D(), e.ProbeLimit, out)
	return out
}

func (ev *worldEvents) probeLoop(ctx context.Context, every time.Duration, limit int, out chan<- events.Batch) {
	var mark events.Watermark
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		b, ok := ev.probeOnce(ctx, &mark, limit)
		if ok {
			select {
			case out <- b:
			case <-ctx.Done():
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// probeOnce asks the plugin once; ok says there is a batch to sync.
func (ev *worldEvents) probeOnce(ctx context.Context, mark *events.Watermark, limit int) (events.Batch, bool) {
	uuids, stamps, err := ev.plugin.RecentNodes(ctx, limit)
	if err != nil {
		ev.m.Probes.WithLabelValues("failed").Inc()
		ev.log.Warn("events: probe of recently changed nodes failed; the next full cycle covers it", "err", err)
		return events.Batch{}, false
	}
	changed, overflow := mark.Changed(uuids, stamps, limit)
	outcome := "ok"
	if overflow {
		outcome = "overflow"
	}
	ev.m.Probes.WithLabelValues(outcome).Inc()
	ev.m.ProbeChanged.Add(float64(len(changed)))
	b := events.Batch{Nodes: changed}
	if overflow {
		b.Overflow = fmt.Sprintf("probe: all %d most recently changed nodes changed since the last probe; more may have", limit)
	}
	return b, len(changed) > 0
}
