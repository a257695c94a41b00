package main

import (
	"net/http"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
	"github.com/rpengine/rpengine/plugins/vmware/vcenter"
)

// plugin adapts vcenter.Client to guest.Plugin and guest.DeletionChecker.
// rt, when set (tests), carries the calls instead of guest.Transport.
type plugin struct {
	c  *vcenter.Client
	rt http.RoundTripper
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
	p.c = vcenter.New(cfg, rt, logLine)
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
