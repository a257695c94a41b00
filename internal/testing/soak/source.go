package soak

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rpengine/rpengine/hostabi"
)

// errOverrun marks an answer the source must not give in time: the
// in-memory source waits out its time limit and fails, the Wasm world
// service waits past the plugin's limit so the host kills the call.
var errOverrun = errors.New("overran its time limit")

// serveNodes is the node listing as the source reports it this cycle,
// with the cycle's source faults applied, and the hook of instances
// landing after the snapshot was taken. The served records are kept for
// the oracle.
func (r *Runner) serveNodes(req hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	r.mu.Lock()
	p := r.plan
	if err := sourceFault(p.nodesErr, p.timeoutIn == "list_nodes", "list_nodes"); err != nil {
		r.mu.Unlock()
		return nil, err
	}
	nodes := r.w.listing()
	if p.filter && len(req.Shards) > 0 {
		nodes = slices.DeleteFunc(nodes, func(n hostabi.Node) bool { return !slices.Contains(req.Shards, n.Shard) })
	}
	if p.partial > 0 {
		// The lie: nodes left out, the answer still claims to be complete.
		nodes = slices.DeleteFunc(nodes, func(hostabi.Node) bool { return p.rng.Float64() < p.partial })
	}
	r.snapNodes, r.listedNodes = nodes, true
	if p.restart != crashInListing { // that listing never reaches the engine
		for _, n := range nodes {
			r.lastListed[strings.ToLower(n.UUID)] = r.cycle
		}
	}
	if r.cfg.Trace != "" {
		listed := slices.ContainsFunc(nodes, func(n hostabi.Node) bool { return strings.EqualFold(n.UUID, r.cfg.Trace) })
		r.trace(r.cfg.Trace, "listed=%v (hostile %q, partial %v)", listed, r.w.byUUID[r.cfg.Trace].hostile, p.partial)
	}
	r.mu.Unlock()

	// The race nova lost providers to: instances land after the node
	// snapshot, before the instance listing.
	for range p.landDuring {
		r.midCycle("instance_lands_during_node_listing", func() bool { return r.land(p.rng) })
	}
	r.mu.Lock()
	r.calls = append(r.calls, "nodes")
	r.landedBeforeNodesReturned = r.w.instanceList()
	r.mu.Unlock()
	if p.restart == crashInListing {
		r.mu.Lock()
		r.restarted = crashInListing
		r.mu.Unlock()
		r.cancel()
	}
	return cloneNodes(nodes), nil
}

func (r *Runner) serveInstances() ([]hostabi.Instance, error) {
	p := r.plan
	for range p.landBetween {
		r.midCycle("instance_lands_between_listings", func() bool { return r.land(p.rng) })
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := sourceFault(p.instancesErr, p.timeoutIn == "list_instances", "list_instances"); err != nil {
		return nil, err
	}
	r.calls = append(r.calls, "instances")
	r.snapInstances, r.listedInstance = r.w.instanceList(), true
	return slices.Clone(r.snapInstances), nil
}

func (r *Runner) serveConfirm(uuids []string) (deleted, present []string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.plan
	if err := sourceFault(p.confirmErr, p.timeoutIn == "confirm_deleted", "confirm_deleted"); err != nil {
		return nil, nil, err
	}
	r.confirmAsked = append(r.confirmAsked, uuids...)
	deleted, present = r.w.confirm(uuids)
	for _, u := range deleted {
		r.proved(strings.ToLower(u))
	}
	if slices.Contains(uuids, r.cfg.Trace) {
		r.trace(r.cfg.Trace, "confirm_deleted asked: deleted=%v", slices.Contains(deleted, r.cfg.Trace))
	}
	return deleted, present, nil
}

func sourceFault(fail, overrun bool, op string) error {
	switch {
	case fail:
		return fmt.Errorf("%s: ironic answered 503 (injected)", op)
	case overrun:
		return fmt.Errorf("%s: %w", op, errOverrun)
	}
	return nil
}

// midCycle runs a world event while the engine's cycle is under way.
func (r *Runner) midCycle(kind string, f func() bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if f() {
		r.rep.Events[kind]++
	}
}

func cloneNodes(ns []hostabi.Node) []hostabi.Node {
	out := slices.Clone(ns)
	for i := range out {
		out[i].Traits = slices.Clone(out[i].Traits)
	}
	return out
}

// memSource is the in-memory inventory plugin: the world, served
// directly. It proves deletion only for nodes really gone.
type memSource struct {
	r       *Runner
	timeout time.Duration // the "plugin.timeout" an overrun waits out
}

func (s *memSource) ListNodes(ctx context.Context, req hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	nodes, err := s.r.serveNodes(req)
	return nodes, s.wait(ctx, err)
}

func (s *memSource) ListInstances(ctx context.Context) ([]hostabi.Instance, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	in, err := s.r.serveInstances()
	return in, s.wait(ctx, err)
}

func (s *memSource) ConfirmDeleted(ctx context.Context, uuids []string) (deleted, present []string, err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	deleted, present, err = s.r.serveConfirm(uuids)
	return deleted, present, s.wait(ctx, err)
}

// wait turns an overrun into the time-limit error, after the time limit,
// and a cancelled cycle into its error, as a plugin call would.
func (s *memSource) wait(ctx context.Context, err error) error {
	if errors.Is(err, errOverrun) {
		select {
		case <-time.After(s.timeout):
		case <-ctx.Done():
		}
		return fmt.Errorf("plugin memory: %w (plugin.timeout %v)", err, s.timeout)
	}
	if err == nil {
		err = ctx.Err()
	}
	return err
}

// proved records that the source proved u deleted this cycle.
func (r *Runner) proved(u string) {
	if ps := r.proofs[u]; len(ps) == 0 || ps[len(ps)-1] != r.cycle {
		r.proofs[u] = append(ps, r.cycle)
	}
}
