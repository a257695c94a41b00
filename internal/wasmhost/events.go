package wasmhost

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rpengine/rpengine/hostabi"
)

// MapEvents asks the plugin which nodes each message concerns. The answer
// has one entry per message, in order; every uuid must be well formed and
// at most hostabi.MaxNodesPerEvent per message, or the whole answer is
// rejected (a plugin that cannot read one message says so in its Error).
func (p *Plugin) MapEvents(ctx context.Context, msgs []hostabi.EventMessage) ([]hostabi.MappedEvent, error) {
	const export = hostabi.ExportMapEvents
	if !p.Supports(export) {
		return nil, p.named(export, failure(KindRefused, "the plugin does not support this operation"))
	}
	if len(msgs) > hostabi.MaxEventsPerCall {
		return nil, p.named(export, failure(KindRefused, "%d messages asked, more than %d", len(msgs), hostabi.MaxEventsPerCall))
	}
	in, _ := json.Marshal(hostabi.MapEventsRequest{Events: msgs})
	var out hostabi.MapEventsResponse
	if err := p.call(ctx, export, in, p.decoder(&out, nil, mappedList(&out.Events)), &out.Error); err != nil {
		return nil, err
	}
	if len(out.Events) != len(msgs) {
		return nil, p.bad(export, "answered %d events for %d messages", len(out.Events), len(msgs))
	}
	for i, e := range out.Events {
		if len(e.Nodes) > hostabi.MaxNodesPerEvent {
			return nil, p.bad(export, "events[%d] names %d nodes, more than %d", i, len(e.Nodes), hostabi.MaxNodesPerEvent)
		}
		for _, u := range e.Nodes {
			if !hostabi.ValidUUID(u) {
				return nil, p.bad(export, "events[%d] names \"%s\", not a uuid", i, Printable(u))
			}
		}
	}
	return out.Events, nil
}

// ReadNodes reads the given nodes from the source. Every node answered
// must have been asked, once; the nodes it leaves out are not returned
// (the caller never takes that as proof of deletion).
func (p *Plugin) ReadNodes(ctx context.Context, uuids []string) ([]hostabi.Node, error) {
	req := hostabi.ReadNodesRequest{UUIDs: uuids}
	p.askFields(&req.NodeFields)
	out, err := p.read(ctx, req)
	if err != nil {
		return nil, err
	}
	checkNodeFields(out.Nodes, req.NodeFields)
	asked := askedSet(uuids)
	seen := make(map[string]bool, len(out.Nodes))
	for i, n := range out.Nodes {
		u := strings.ToLower(n.UUID)
		if !asked[u] {
			return nil, p.bad(hostabi.ExportReadNodes, "nodes[%d] is \"%s\", which was not asked", i, Printable(n.UUID))
		}
		if seen[u] {
			return nil, p.bad(hostabi.ExportReadNodes, "nodes[%d]: \"%s\" answered twice", i, Printable(n.UUID))
		}
		seen[u] = true
	}
	return out.Nodes, nil
}

// ReadInstances reads the consumers placed on the given nodes; each must
// be on one of them.
func (p *Plugin) ReadInstances(ctx context.Context, uuids []string) ([]hostabi.Instance, error) {
	out, err := p.read(ctx, hostabi.ReadNodesRequest{UUIDs: uuids, Instances: true})
	if err != nil {
		return nil, err
	}
	asked := askedSet(uuids)
	for i, in := range out.Instances {
		if !asked[strings.ToLower(in.NodeUUID)] {
			return nil, p.bad(hostabi.ExportReadNodes, "instances[%d] is on \"%s\", which was not asked", i, Printable(in.NodeUUID))
		}
	}
	return out.Instances, nil
}

func (p *Plugin) read(ctx context.Context, req hostabi.ReadNodesRequest) (hostabi.ReadNodesResponse, error) {
	const export = hostabi.ExportReadNodes
	var out hostabi.ReadNodesResponse
	if !p.Supports(export) {
		return out, p.named(export, failure(KindRefused, "the plugin does not support this operation"))
	}
	if len(req.UUIDs) > hostabi.MaxReadNodes {
		return out, p.named(export, failure(KindRefused, "%d nodes asked, more than %d", len(req.UUIDs), hostabi.MaxReadNodes))
	}
	in, _ := json.Marshal(req)
	if err := p.call(ctx, export, in, p.decoder(&out, nil, nodeList(&out.Nodes), instanceList(&out.Instances)), &out.Error); err != nil {
		return out, err
	}
	if !out.Complete {
		return out, p.bad(export, "answered without complete=true")
	}
	return out, nil
}

// bad rejects an answer after it was decoded; like any rejected answer it
// costs the instance.
func (p *Plugin) bad(export, format string, args ...any) error {
	p.mu.Lock()
	p.run.discard(context.Background())
	p.mu.Unlock()
	return p.named(export, failure(KindBadAnswer, format, args...))
}

func askedSet(uuids []string) map[string]bool {
	m := make(map[string]bool, len(uuids))
	for _, u := range uuids {
		m[strings.ToLower(u)] = true
	}
	return m
}

// mappedList decodes map_events' answers; one over a per-record limit
// (a string too long, too many entries) is kept as unreadable, naming
// the fault: it may have named any node, so it names none.
func mappedList(out *[]hostabi.MappedEvent) listing {
	return listing{"events", func() { *out = []hostabi.MappedEvent{} }, func(dec *json.Decoder, _ Limits, bad func() *hostabi.Invalid) (int, error) {
		var e hostabi.MappedEvent
		invalid, err := recordError(dec.Decode(&e), bad())
		if invalid != nil {
			e = hostabi.MappedEvent{Nodes: []string{}, Error: "answer over a limit: " + invalid.Reason}
		}
		*out = append(*out, e)
		return 3 + len(e.Nodes), err
	}}
}

// RecentNodes asks the plugin for the uuids of the limit nodes its
// source changed last, newest first, with the source's stamp of each
// change. Every uuid must be well formed and answered once, with a stamp
// of its own (not empty, at most hostabi.MaxChangedLength bytes), or the
// whole answer is refused: a probe that cannot be read is no evidence.
func (p *Plugin) RecentNodes(ctx context.Context, limit int) (uuids, changed []string, err error) {
	const export = hostabi.ExportRecentNodes
	if !p.Supports(export) {
		return nil, nil, p.named(export, failure(KindRefused, "the plugin does not support this operation"))
	}
	if limit < 1 || limit > hostabi.MaxRecentNodes {
		return nil, nil, p.named(export, failure(KindRefused, "limit %d, want 1..%d", limit, hostabi.MaxRecentNodes))
	}
	in, _ := json.Marshal(hostabi.RecentNodesRequest{Limit: limit})
	var out hostabi.RecentNodesResponse
	if err := p.call(ctx, export, in, p.decoder(&out, nil, pairedList("uuids", &out.UUIDs), pairedList("changed", &out.Changed)), &out.Error); err != nil {
		return nil, nil, err
	}
	if why := recentFault(out, limit); why != "" {
		return nil, nil, p.bad(export, "%s", why)
	}
	for i, u := range out.UUIDs {
		out.UUIDs[i] = strings.ToLower(u)
	}
	return out.UUIDs, out.Changed, nil
}

// recentFault says what makes a recent_nodes answer unusable, or "".
func recentFault(out hostabi.RecentNodesResponse, limit int) string {
	switch {
	case !out.Complete:
		return "answered without complete=true"
	case len(out.UUIDs) > limit:
		return fmt.Sprintf("answered %d nodes for a limit of %d", len(out.UUIDs), limit)
	case len(out.Changed) != len(out.UUIDs):
		return fmt.Sprintf("answered %d stamps for %d nodes", len(out.Changed), len(out.UUIDs))
	}
	seen := make(map[string]bool, len(out.UUIDs))
	for i, u := range out.UUIDs {
		u = strings.ToLower(u)
		switch {
		case !hostabi.ValidUUID(u):
			return fmt.Sprintf("uuids[%d] is \"%s\", not a uuid", i, Printable(out.UUIDs[i]))
		case seen[u]:
			return fmt.Sprintf("uuids[%d]: \"%s\" answered twice", i, Printable(u))
		case out.Changed[i] == "" || len(out.Changed[i]) > hostabi.MaxChangedLength:
			return fmt.Sprintf("changed[%d] is empty or over %d bytes", i, hostabi.MaxChangedLength)
		}
		seen[u] = true
	}
	return ""
}

// pairedList decodes one of two lists paired by index: an entry the
// guard or the decoder refused is kept empty, so recentFault refuses the
// answer rather than pairing a stamp with the wrong node.
func pairedList(key string, out *[]string) listing {
	return listing{key, func() { *out = []string{} }, func(dec *json.Decoder, _ Limits, bad func() *hostabi.Invalid) (int, error) {
		var s string
		b, err := recordError(dec.Decode(&s), bad())
		if b != nil {
			s = ""
		}
		*out = append(*out, s)
		return 1, err
	}}
}
