package memsource_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/memsource"
)

// The source lists copies, proves deletion as told, and runs its hooks in
// a plugin's order: the node snapshot, then DuringNodes.
func TestSourceListsCopiesAndProvesAsTold(t *testing.T) {
	ctx := context.Background()
	s := memsource.New(memsource.State{Nodes: []hostabi.Node{{UUID: "a"}, {UUID: "b"}}})
	var _ engine.DeletionChecker = s
	if _, ok := engine.ProvesDeletion(s); !ok {
		t.Fatal("a memsource proves deletion")
	}
	s.Update(func(st *memsource.State) {
		st.Gone["b"] = true
		st.DuringNodes = func(s *memsource.Source) {
			s.Update(func(st *memsource.State) { st.Instances = []hostabi.Instance{{UUID: "i", NodeUUID: "a"}} })
		}
	})
	nodes, err := s.ListNodes(ctx, hostabi.ListNodesRequest{})
	if err != nil || len(nodes) != 2 {
		t.Fatalf("nodes %v, %v", nodes, err)
	}
	nodes[0].UUID = "changed"
	if again, _ := s.ListNodes(ctx, hostabi.ListNodesRequest{}); again[0].UUID != "a" {
		t.Fatal("the listing is not a copy")
	}
	if in, _ := s.ListInstances(ctx); len(in) != 1 {
		t.Fatalf("the instance landed during the listing is not listed: %v", in)
	}
	d, p, _ := s.ConfirmDeleted(ctx, []string{"a", "b"})
	if !slices.Equal(d, []string{"b"}) || p != nil {
		t.Fatalf("deleted %v, present %v", d, p)
	}
	s.Update(func(st *memsource.State) { st.SayPresent = true })
	if _, p, _ := s.ConfirmDeleted(ctx, []string{"a", "b"}); !slices.Equal(p, []string{"a"}) {
		t.Fatalf("present %v", p)
	}
	if c := s.Calls(); !slices.Equal(c, []string{"nodes", "nodes", "instances", "confirm", "confirm"}) {
		t.Fatalf("calls %v", c)
	}
	boom := errors.New("ironic answered 503")
	s.Update(func(st *memsource.State) { st.FailNodes = boom })
	if _, err := s.ListNodes(ctx, hostabi.ListNodesRequest{}); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
}

// A gated listing waits for the gate or its context.
func TestGateHoldsTheListing(t *testing.T) {
	entered, gate := make(chan int, 1), make(chan struct{})
	s := memsource.New(memsource.State{Entered: entered, Gate: gate})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := s.ListNodes(ctx, hostabi.ListNodesRequest{}); done <- err }()
	if call := <-entered; call != 1 {
		t.Fatalf("call %d", call)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
}
