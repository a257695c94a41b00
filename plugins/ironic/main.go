package main

import (
	"runtime/debug"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
	"github.com/rpengine/rpengine/plugins/ironic/ironic"
)

// plugin adapts ironic.Client to guest.Plugin, guest.DeletionChecker,
// guest.Describer and guest.ServiceUser.
type plugin struct {
	c   *ironic.Client
	cfg ironic.Config
}

// version is the plugin's version, reported by describe (engine plugin
// inspect, validate, the status page); a build may set it with
// -ldflags "-X main.version=...".
var version = "1.1.0"

func (p *plugin) Describe() (name, ver string) { return "ironic", version }

// Services declares baremetal, and compute once configured with a
// compute_host.
func (p *plugin) Services() []hostabi.Service { return p.cfg.Services() }

func (p *plugin) Configure(raw []byte) (string, error) {
	cfg, err := ironic.ParseConfig(raw)
	if err != nil {
		return "", err
	}
	debug.SetGCPercent(ironic.GuestGCPercent)
	p.c, p.cfg = ironic.New(cfg, guest.HTTP, ironic.WithLog(logLine)), cfg
	return "ironic", nil
}

func (p *plugin) ListNodes(req hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	return p.c.ListNodes(req)
}

// ListNodeRefs answers by reference when the host offers it (guest.RefLister).
func (p *plugin) ListNodeRefs(req hostabi.ListNodesRequest) (*hostabi.NodeRefs, []hostabi.Node, error) {
	return p.c.ListNodeRefs(req)
}

func (p *plugin) ListInstances() ([]hostabi.Instance, error) { return p.c.ListInstances() }

func (p *plugin) ConfirmDeleted(uuids []string) (deleted, present []string, err error) {
	return p.c.ConfirmDeleted(uuids)
}

func init() { guest.Run(&plugin{}) }

// main is required by the go command; c-shared reactors never call it.
func main() {}
