package guest

import (
	"encoding/json"
	"fmt"

	"github.com/rpengine/rpengine/hostabi"
)

// EventMapper is the optional capability to read the source's bus
// messages (hostabi.ExportMapEvents). MapEvent is called once per message
// and names the nodes it concerns; it must not call the source: the
// engine re-reads those nodes (NodeReader), so a message is only a hint
// and a forged one costs a read, never a wrong write. An error means the
// message is unreadable; the engine then runs a full cycle.
type EventMapper interface {
	MapEvent(msg hostabi.EventMessage) (hostabi.MappedEvent, error)
}

// NodeReader is the optional capability to read a handful of nodes
// (hostabi.ExportReadNodes) with the cheapest correct requests. ReadNodes
// returns each asked node the source has (leaving out those it does not);
// ReadInstances the consumers on the asked nodes. Either fails whole.
type NodeReader interface {
	ReadNodes(uuids []string) ([]hostabi.Node, error)
	ReadInstances(uuids []string) ([]hostabi.Instance, error)
}

// FieldReader is a NodeReader that also fills the optional node fields
// a read asks for (hostabi.NodeFields), as its listing does: a node read
// must be the node a listing gives. A NodeReader without it is asked
// ReadNodes, and its nodes carry none.
type FieldReader interface {
	ReadNodesWith(uuids []string, fields hostabi.NodeFields) ([]hostabi.Node, error)
}

// RecentLister is the optional capability to list the nodes the source
// changed last, newest first (hostabi.ExportRecentNodes), with the
// source's stamp of each change: the engine's probe for changes the bus
// does not announce. One cheap request, never a listing of the fleet.
type RecentLister interface {
	RecentNodes(limit int) (uuids, changed []string, err error)
}

// eventOperations lists what p implements of the event capability; the
// engine uses events only when both are there.
func eventOperations(p Plugin) []string {
	var ops []string
	if _, ok := p.(EventMapper); ok {
		ops = append(ops, hostabi.ExportMapEvents)
	}
	if _, ok := p.(NodeReader); ok {
		ops = append(ops, hostabi.ExportReadNodes)
	}
	if _, ok := p.(RecentLister); ok {
		ops = append(ops, hostabi.ExportRecentNodes)
	}
	return ops
}

// handleEvents runs the event operations; ok is false for another export.
func handleEvents(p Plugin, export string, in []byte) (answer any, ok bool) {
	switch export {
	case hostabi.ExportMapEvents:
		return mapEvents(p, in), true
	case hostabi.ExportReadNodes:
		return readNodes(p, in), true
	case hostabi.ExportRecentNodes:
		return recentNodes(p, in), true
	}
	return nil, false
}

func mapEvents(p Plugin, in []byte) hostabi.MapEventsResponse {
	var r hostabi.MapEventsResponse
	m, ok := p.(EventMapper)
	if !ok {
		setErr(&r.Error, notImplemented(hostabi.ExportMapEvents))
		return r
	}
	var req hostabi.MapEventsRequest
	if err := json.Unmarshal(in, &req); err != nil {
		setErr(&r.Error, fmt.Errorf("decode map_events request: %w", err))
		return r
	}
	r.Events = make([]hostabi.MappedEvent, len(req.Events))
	for i, msg := range req.Events {
		e, err := m.MapEvent(msg)
		if err != nil {
			e = hostabi.MappedEvent{Kind: e.Kind, Error: err.Error()}
		}
		e.Nodes = nonNil(e.Nodes)
		r.Events[i] = e
	}
	return r
}

func readNodes(p Plugin, in []byte) hostabi.ReadNodesResponse {
	r := hostabi.ReadNodesResponse{Nodes: []hostabi.Node{}, Instances: []hostabi.Instance{}}
	nr, ok := p.(NodeReader)
	if !ok {
		setErr(&r.Error, notImplemented(hostabi.ExportReadNodes))
		return r
	}
	var req hostabi.ReadNodesRequest
	if err := json.Unmarshal(in, &req); err != nil {
		setErr(&r.Error, fmt.Errorf("decode read_nodes request: %w", err))
		return r
	}
	var err error
	if req.Instances {
		var inst []hostabi.Instance
		if inst, err = nr.ReadInstances(req.UUIDs); inst != nil {
			r.Instances = inst
		}
	} else {
		var nodes []hostabi.Node
		if fr, ok := p.(FieldReader); ok {
			nodes, err = fr.ReadNodesWith(req.UUIDs, req.NodeFields)
		} else {
			nodes, err = nr.ReadNodes(req.UUIDs)
		}
		if nodes != nil {
			r.Nodes = nodes
		}
	}
	if err != nil {
		r.Nodes, r.Instances = []hostabi.Node{}, []hostabi.Instance{}
		setErr(&r.Error, err)
		return r
	}
	r.Complete = true
	return r
}

func recentNodes(p Plugin, in []byte) hostabi.RecentNodesResponse {
	r := hostabi.RecentNodesResponse{UUIDs: []string{}, Changed: []string{}}
	rl, ok := p.(RecentLister)
	if !ok {
		setErr(&r.Error, notImplemented(hostabi.ExportRecentNodes))
		return r
	}
	var req hostabi.RecentNodesRequest
	if err := json.Unmarshal(in, &req); err != nil {
		setErr(&r.Error, fmt.Errorf("decode recent_nodes request: %w", err))
		return r
	}
	uuids, changed, err := rl.RecentNodes(req.Limit)
	if err != nil {
		setErr(&r.Error, err)
		return r
	}
	r.UUIDs, r.Changed, r.Complete = nonNil(uuids), nonNil(changed), true
	return r
}
