// Package memsource is the in-memory inventory source of the tests and
// benchmarks: an engine.Source (and engine.DeletionChecker) whose nodes
// and instances are held in memory, so the engine can be driven without
// a plugin. Its hooks cover what tests need of a plugin's timing: a
// listing held at a gate, a change landing during the node listing, a
// failed listing.
package memsource

import (
	"context"
	"slices"
	"sync"

	"github.com/rpengine/rpengine/hostabi"
)

// State is what a Source holds. Change it with Source.Update, under the
// source's lock.
type State struct {
	Nodes     []hostabi.Node
	Instances []hostabi.Instance
	// Gone lists the uuids ConfirmDeleted proves deleted. With SayPresent
	// every other uuid asked is answered present; without, nothing is said
	// of it (as a plugin that cannot tell).
	Gone       map[string]bool
	SayPresent bool
	// FailNodes, if set, is ListNodes' error.
	FailNodes error
	// Entered, if set, receives each ListNodes call's number (from 1)
	// first; Gate, if set, then holds the call until it receives a value
	// (or is closed), or until the call's context ends.
	Entered chan int
	Gate    chan struct{}
	// Canceled, if set, is what a listing held at the gate returns when
	// its context ends, instead of ctx.Err(): a Wasm plugin words the
	// cancellation its own way.
	Canceled error
	// DuringNodes, if set, runs after the node snapshot is taken, before
	// ListNodes returns: a change landing during the listing.
	DuringNodes func(*Source)
}

// Source is safe for concurrent use.
type Source struct {
	mu    sync.Mutex
	st    State
	calls []string
	nodes int // ListNodes calls
}

// New returns a source holding st.
func New(st State) *Source {
	if st.Gone == nil {
		st.Gone = map[string]bool{}
	}
	return &Source{st: st}
}

// Update changes the state under the lock.
func (s *Source) Update(f func(*State)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.st)
}

// Calls lists the calls so far, in order: "nodes", "instances", "confirm".
func (s *Source) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// ListNodes returns a copy of the nodes, after the hooks.
func (s *Source) ListNodes(ctx context.Context, _ hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	s.mu.Lock()
	s.calls = append(s.calls, "nodes")
	s.nodes++
	st, call := s.st, s.nodes
	snap := slices.Clone(st.Nodes)
	s.mu.Unlock()
	if st.FailNodes != nil {
		return nil, st.FailNodes
	}
	if st.Entered != nil {
		st.Entered <- call
	}
	if st.Gate != nil {
		select {
		case <-st.Gate:
		case <-ctx.Done():
			if st.Canceled != nil {
				return nil, st.Canceled
			}
			return nil, ctx.Err()
		}
	}
	if st.DuringNodes != nil {
		st.DuringNodes(s)
	}
	return snap, nil
}

// ListInstances returns a copy of the instances.
func (s *Source) ListInstances(context.Context) ([]hostabi.Instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "instances")
	return slices.Clone(s.st.Instances), nil
}

// ConfirmDeleted proves deleted the uuids in Gone (and, with SayPresent,
// the others present).
func (s *Source) ConfirmDeleted(_ context.Context, uuids []string) (deleted, present []string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "confirm")
	for _, u := range uuids {
		switch {
		case s.st.Gone[u]:
			deleted = append(deleted, u)
		case s.st.SayPresent:
			present = append(present, u)
		}
	}
	return deleted, present, nil
}
