package main

import (
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/plugins/ironic/ironic"
)

// The event capability (guest.EventMapper, guest.NodeReader): the engine
// acts on Ironic's versioned notifications between full cycles.

func (p *plugin) MapEvent(msg hostabi.EventMessage) (hostabi.MappedEvent, error) {
	return ironic.MapEvent(msg)
}

func (p *plugin) ReadNodes(uuids []string) ([]hostabi.Node, error) { return p.c.ReadNodes(uuids) }

func (p *plugin) ReadInstances(uuids []string) ([]hostabi.Instance, error) {
	return p.c.ReadInstances(uuids)
}

// RecentNodes is the probe for changes Ironic does not announce
// (guest.RecentLister).
func (p *plugin) RecentNodes(limit int) ([]string, []string, error) { return p.c.RecentNodes(limit) }

// ReadNodesWith reads nodes with the optional fields the engine's rules
// need (guest.FieldReader).
func (p *plugin) ReadNodesWith(uuids []string, f hostabi.NodeFields) ([]hostabi.Node, error) {
	return p.c.ReadNodesWith(uuids, f)
}
