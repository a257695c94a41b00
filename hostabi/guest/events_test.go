package guest_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
)

type plain struct{}

func (plain) Configure([]byte) (string, error)                           { return "plain", nil }
func (plain) ListNodes(hostabi.ListNodesRequest) ([]hostabi.Node, error) { return nil, nil }
func (plain) ListInstances() ([]hostabi.Instance, error)                 { return nil, nil }

type eventful struct{ plain }

func (eventful) MapEvent(m hostabi.EventMessage) (hostabi.MappedEvent, error) {
	if m.Body == "bad" {
		return hostabi.MappedEvent{Kind: "x"}, errors.New("unreadable")
	}
	return hostabi.MappedEvent{Nodes: []string{m.Body}}, nil
}
func (eventful) ReadNodes(u []string) ([]hostabi.Node, error) {
	if slices.Contains(u, "fail") {
		return []hostabi.Node{{UUID: "half"}}, errors.New("ironic 503")
	}
	return []hostabi.Node{{UUID: u[0]}}, nil
}
func (eventful) ReadInstances(u []string) ([]hostabi.Instance, error) {
	return []hostabi.Instance{{UUID: "i", NodeUUID: u[0]}}, nil
}

// The SDK lists the event operations only for a plugin that implements
// them, answers one entry per message with its error in-band, and never
// answers part of a failed read.
func TestEventOperations(t *testing.T) {
	var d hostabi.DescribeResponse
	_ = json.Unmarshal(guest.Handle(plain{}, hostabi.ExportDescribe, []byte("{}")), &d)
	if slices.Contains(d.Operations, hostabi.ExportMapEvents) || slices.Contains(d.Operations, hostabi.ExportReadNodes) {
		t.Fatalf("a plain plugin lists %v", d.Operations)
	}
	_ = json.Unmarshal(guest.Handle(eventful{}, hostabi.ExportDescribe, []byte("{}")), &d)
	if !slices.Contains(d.Operations, hostabi.ExportMapEvents) || !slices.Contains(d.Operations, hostabi.ExportReadNodes) {
		t.Fatalf("an event plugin lists %v", d.Operations)
	}
	var m hostabi.MapEventsResponse
	_ = json.Unmarshal(guest.Handle(eventful{}, hostabi.ExportMapEvents, []byte(`{"events":[{"body":"u1"},{"body":"bad"}]}`)), &m)
	if len(m.Events) != 2 || m.Events[0].Nodes[0] != "u1" || m.Events[1].Error != "unreadable" || m.Events[1].Nodes == nil {
		t.Fatalf("map: %+v", m)
	}
	var r hostabi.ReadNodesResponse
	_ = json.Unmarshal(guest.Handle(eventful{}, hostabi.ExportReadNodes, []byte(`{"uuids":["a"]}`)), &r)
	if !r.Complete || len(r.Nodes) != 1 || r.Error.Error != "" {
		t.Fatalf("read: %+v", r)
	}
	r = hostabi.ReadNodesResponse{}
	_ = json.Unmarshal(guest.Handle(eventful{}, hostabi.ExportReadNodes, []byte(`{"uuids":["a"],"instances":true}`)), &r)
	if !r.Complete || len(r.Instances) != 1 || len(r.Nodes) != 0 {
		t.Fatalf("read instances: %+v", r)
	}
	r = hostabi.ReadNodesResponse{}
	_ = json.Unmarshal(guest.Handle(eventful{}, hostabi.ExportReadNodes, []byte(`{"uuids":["fail"]}`)), &r)
	if r.Complete || len(r.Nodes) != 0 || !strings.Contains(r.Error.Error, "503") {
		t.Fatalf("a failed read answered %+v", r)
	}
	r = hostabi.ReadNodesResponse{}
	_ = json.Unmarshal(guest.Handle(plain{}, hostabi.ExportReadNodes, []byte(`{"uuids":["a"]}`)), &r)
	if r.Complete || !strings.Contains(r.Error.Error, "not implemented") {
		t.Fatalf("a plain plugin answered read_nodes: %+v", r)
	}
}
