// Command minimal is the smallest SDK plugin: no optional operation, no
// host function. The wasmhost tests use it to see that capabilities are
// detected, not assumed, and to time a call with nothing in it.
package main

import (
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
)

type minimal struct{}

func (minimal) Configure([]byte) (string, error) { return "minimal", nil }
func (minimal) ListNodes(hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	return []hostabi.Node{}, nil
}
func (minimal) ListInstances() ([]hostabi.Instance, error) { return []hostabi.Instance{}, nil }

func init() { guest.Run(minimal{}) }

func main() {}
