package main

import (
	"net/http"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
	"github.com/rpengine/rpengine/plugins/vmware/vcenter"
)

// plugin adapts vcenter.Client to guest.Plugin, guest.DeletionChecker,
// guest.Describer and guest.ServiceUser. rt, when set (tests), carries
// the calls instead of guest.Transport.
type plugin struct {
	c       *vcenter.Client
	rt      http.RoundTripper
	service string // the granted service's name, once configured
}

// Services declares the one service the plugin calls: vCenter, outside
// the catalog, under the configured name ("vcenter" by default).
func (p *plugin) Services() []hostabi.Service {
	name := p.service
	if name == "" {
		name = "vcenter"
	}
	return []hostabi.Service{{Name: name}}
}

// version is the plugin's version, reported by describe (engine plugin
// inspect, rpengine_plugin_info); a build may set it with
// -ldflags "-X main.version=...".
var version = "1.0.0"

// Describe names the plugin before it is configured.
func (p *plugin) Describe() (name, ver string) { return "vmware", version }

func (p *plugin) Configure(raw []byte) (string, error) {
	cfg, err := vcenter.ParseConfig(raw)
	if err != nil {
		return "", err
	}
	rt := p.rt
	if rt == nil {
		rt = guest.Transport{}
	}
	p.c, p.service = vcenter.New(cfg, rt, logLine), cfg.Service
	return "vmware", nil
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
