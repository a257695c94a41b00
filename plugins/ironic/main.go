package main

import (
	"runtime/debug"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
	"github.com/rpengine/rpengine/plugins/ironic/ironic"
)

// plugin adapts ironic.Client to guest.Plugin and guest.DeletionChecker.
type plugin struct{ c *ironic.Client }

func (p *plugin) Configure(raw []byte) (string, error) {
	cfg, err := ironic.ParseConfig(raw)
	if err != nil {
		return "", err
	}
	debug.SetGCPercent(ironic.GuestGCPercent)
	p.c = ironic.New(cfg, guest.HTTP, ironic.WithLog(logLine))
	return "ironic", nil
}

func (p *plugin) ListNodes(req hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	return p.c.ListNodes(req)
}

func (p *plugin) ListInstances() ([]hostabi.Instance, error) { return p.c.ListInstances() }

func (p *plugin) ConfirmDeleted(uuids []string) (deleted, present []string, err error) {
	return p.c.ConfirmDeleted(uuids)
}

func init() { guest.Run(&plugin{}) }

// main is required by the go command; c-shared reactors never call it.
func main() {}
