package main

import (
	"errors"
	"os"
	"slices"
	"strings"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
)

type fake struct {
	cfg       config
	nodes     []hostabi.Node
	instances []hostabi.Instance
	cycle     int // list_nodes calls so far, for scripted steps
}

// version is the fake's version, for engine plugin inspect; a build may
// set it with -ldflags "-X main.version=...".
var version = "1"

// Describe names the plugin before it is configured.
func (f *fake) Describe() (name, ver string) { return "fake", version }

// Services declares the world service when the configuration names one;
// otherwise the fake calls none.
func (f *fake) Services() []hostabi.Service {
	if f.cfg.World == "" {
		return []hostabi.Service{}
	}
	return []hostabi.Service{{Name: f.cfg.World}}
}

func (f *fake) Configure(raw []byte) (string, error) {
	c, err := parseConfig(raw)
	if err != nil {
		return "", err
	}
	f.cfg = c
	f.nodes, f.instances = generate(c)
	return "fake", nil
}

func (f *fake) ListNodes(hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	if err := f.fault("list_nodes"); err != nil {
		return nil, err
	}
	if err := f.fetch("list_nodes"); err != nil {
		return nil, err
	}
	f.cycle++
	f.advance(f.cycle, "before")
	snapshot := slices.Clone(f.nodes)
	f.advance(f.cycle, "during")
	return snapshot, nil
}

func (f *fake) ListInstances() ([]hostabi.Instance, error) {
	if err := f.fault("list_instances"); err != nil {
		return nil, err
	}
	if err := f.fetch("list_instances"); err != nil {
		return nil, err
	}
	return slices.Clone(f.instances), nil
}

// ConfirmDeleted proves deleted every node not in the configured world,
// except the unknown_nodes, about which it knows nothing.
func (f *fake) ConfirmDeleted(uuids []string) (deleted, present []string, err error) {
	if err := f.fault("confirm_deleted"); err != nil {
		return nil, nil, err
	}
	if err := f.fetch("confirm_deleted"); err != nil {
		return nil, nil, err
	}
	world := make(map[string]bool, len(f.nodes))
	for _, n := range f.nodes {
		world[strings.ToLower(n.UUID)] = true
	}
	for _, u := range uuids {
		switch {
		case slices.ContainsFunc(f.cfg.UnknownNodes, func(x string) bool { return strings.EqualFold(x, u) }):
		case world[strings.ToLower(u)]:
			present = append(present, u)
		default:
			deleted = append(deleted, u)
		}
	}
	return deleted, present, nil
}

// hogged keeps the hog fault's allocations reachable.
var hogged [][]byte

func (f *fake) fault(op string) error {
	in := f.cfg.FaultIn
	if in == "" {
		in = "list_nodes"
	}
	if f.cfg.Fault == "" || in != op {
		return nil
	}
	switch f.cfg.Fault {
	case "error":
		return errors.New("injected failure in " + op)
	case "panic":
		panic("injected panic in " + op)
	case "exit":
		os.Exit(3)
	case "spin":
		for x := 0; ; x++ {
			_ = x
		}
	case "hog":
		for {
			hogged = append(hogged, make([]byte, 1<<20))
		}
	}
	return nil
}

func init() { guest.Run(&fake{}) }

// main is required by the go command; c-shared reactors never call it.
func main() {}
