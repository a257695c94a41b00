package main

import (
	"errors"
	"os"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
)

type fake struct {
	cfg       config
	nodes     []hostabi.Node
	instances []hostabi.Instance
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
	return f.nodes, nil
}

func (f *fake) ListInstances() ([]hostabi.Instance, error) {
	if err := f.fault("list_instances"); err != nil {
		return nil, err
	}
	return f.instances, nil
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
