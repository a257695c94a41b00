package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/hostabi"
)

// onceOnly is `engine once --node`: one cycle whose writes are limited
// to the named nodes' providers. When every node is named by its uuid,
// the plugin exports read_nodes and nova is not beside (whose holds a
// node sync leaves to full cycles), the nodes are read alone, as the
// daemon's event syncs read them; otherwise every node is listed and
// the rest filtered out (engine.CycleOnly). A node the plugin does not
// list in this engine's scope is an error, and then nothing is written.
func onceOnly(ctx context.Context, w *assembly, nodes []string, log *slog.Logger) (engine.Report, error) {
	if !perNodeRead(w, nodes) {
		log.Info("once --node: listing every node, writing the named ones", "nodes", len(nodes), "read", "list_nodes")
		r := w.eng.CycleOnly(ctx, nodes)
		if len(r.Unknown) > 0 {
			return r.Report, unknownNodes(r.Unknown)
		}
		return r.Report, nil
	}
	log.Info("once --node: reading the named nodes alone", "nodes", len(nodes), "read", hostabi.ExportReadNodes)
	uuids := make([]string, len(nodes))
	for i, n := range nodes {
		uuids[i] = strings.ToLower(n)
	}
	// Checked first, so an unknown node writes nothing, as in CycleOnly.
	read, err := w.plugin.ReadNodes(ctx, uuids)
	if err != nil {
		return engine.Report{}, fmt.Errorf("plugin: read nodes: %w; nothing was written", err)
	}
	scope, in := w.eng.Scope(), map[string]bool{}
	for _, n := range read {
		if scope.Contains(n) {
			in[strings.ToLower(n.UUID)] = true
		}
	}
	var unknown []string
	for i, u := range uuids {
		if !in[u] {
			unknown = append(unknown, nodes[i])
		}
	}
	if len(unknown) > 0 {
		return engine.Report{}, unknownNodes(unknown)
	}
	r := w.eng.SyncNodes(ctx, w.plugin, uuids)
	return r.Report, nil
}

// perNodeRead says whether once --node can read the named nodes alone.
func perNodeRead(w *assembly, nodes []string) bool {
	if w.cfg.Nova.Beside || !w.plugin.Supports(hostabi.ExportReadNodes) {
		return false
	}
	for _, n := range nodes {
		if !hostabi.ValidUUID(n) {
			return false
		}
	}
	return true
}

func unknownNodes(names []string) error {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return fmt.Errorf("node %s: the plugin lists no such node in this engine's scope (a uuid or the name the source reports); nothing was written",
		strings.Join(q, ", "))
}
