package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/ops"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// maxConsumers bounds the consumers explain names with their type: a
// bare-metal node has one or two; a hypervisor may have hundreds.
const maxConsumers = 32

// explanation is `engine explain`'s answer about one node (--json).
type explanation struct {
	Node     string          `json:"node"`
	Name     string          `json:"name,omitempty"`
	Why      ops.Explanation `json:"why"`
	Outcome  engine.Outcome  `json:"outcome"`
	Source   *hostabi.Node   `json:"source"`    // nil: not listed by the plugin
	Provider *providerView   `json:"placement"` // nil: no provider
	Record   *engine.Record  `json:"record,omitempty"`
	Writes   []engine.Write  `json:"next_writes"` // what the next cycle would write
	Errors   []engine.Error  `json:"errors,omitempty"`
	Holds    []string        `json:"holds,omitempty"` // this engine's hold consumers on it
	Owner    string          `json:"owner,omitempty"` // another engine's owner trait on it

	Zone *zoneView `json:"zone,omitempty"` // the aggregate rule that places it (explain_zone.go)
	// Drift is, in observe mode, the node's drift by kind and since when
	// ("reserved since 2026-12-05T18:00:00Z"), as the daemon keeps it.
	Drift []string `json:"drift,omitempty"`
}

// providerView is one provider as Placement holds it.
type providerView struct {
	Name        string                         `json:"name"`
	Generation  string                         `json:"generation"`
	Inventory   map[string]placement.Inventory `json:"inventories"`
	Traits      []string                       `json:"traits"`
	Aggregates  []string                       `json:"aggregates"`
	Allocations []allocation                   `json:"allocations"`
}

// allocation is one consumer's use of the provider.
type allocation struct {
	Consumer  string           `json:"consumer"`
	Type      string           `json:"consumer_type,omitempty"` // 1.38+: INSTANCE, MIGRATION, ...
	Project   string           `json:"project_id,omitempty"`
	Resources map[string]int64 `json:"resources"`
	Hold      bool             `json:"engine_hold,omitempty"` // this engine's hold beside nova
}

// recordingSource keeps what the plan's listings returned, so explain
// shows the very records the plan decided from.
type recordingSource struct {
	*wasmhost.Plugin
	nodes     []hostabi.Node
	instances []hostabi.Instance
}

func (s *recordingSource) ListNodes(ctx context.Context, req hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	ns, err := s.Plugin.ListNodes(ctx, req)
	s.nodes = ns
	return ns, err
}

func (s *recordingSource) ListInstances(ctx context.Context) ([]hostabi.Instance, error) {
	is, err := s.Plugin.ListInstances(ctx)
	s.instances = is
	return is, err
}

// cmdExplain says why node (uuid or name) is as it is: the plugin's
// record, Placement's provider, the rule that decides it with its values,
// proofs, holds and the writes the next cycle would make.
func cmdExplain(ctx context.Context, a args, out printer, log *slog.Logger) error {
	if len(a.rest) != 1 {
		return fmt.Errorf("%w: engine explain NODE (a uuid or a name)", errUsage)
	}
	cfg, err := loadConfig(a.config)
	if err != nil {
		return err
	}
	var x *explanation
	if asked, addr, err := fromDaemon(ctx, cfg, apiNodePath(a.rest[0]), &x, log); asked || err != nil {
		if err != nil {
			return err
		}
		log.Info("explanation made by the engine running at server.listen (it proved the daemon's key)", "addr", addr)
		return out.print(x, func() { x.render(out.w) })
	}
	// As plan: the state file is read, not locked (cloud.openState).
	w, err := build(ctx, cfg, log, nil, true)
	if err != nil {
		return err
	}
	defer w.close(ctx)
	src := &recordingSource{Plugin: w.plugin}
	eng := w.engineOver(src, nil, log)
	if cfg.Coord.Enabled() { // as plan: the units held, the shared record
		done, err := planShared(ctx, w, eng, log)
		if err != nil {
			return err
		}
		defer done()
	}
	x, err = explain(ctx, a.rest[0], eng.Plan(ctx), eng, src, w)
	if err != nil {
		return err
	}
	return out.print(x, func() { x.render(out.w) })
}

// explain is the answer about node from plan r, whose listings src
// kept, with what Placement and eng's record (under [coord], the shared
// one merged in) say of it now; the daemon's API answers with it too
// (api.go).
func explain(ctx context.Context, node string, r engine.Report, eng *engine.Engine, src *recordingSource, w *assembly) (*explanation, error) {
	x, err := explainNode(node, r, src)
	if err != nil {
		return nil, err
	}
	x.Zone = x.zoneOf(w.cfg.AggregateRules())
	if err := x.readPlacement(ctx, w.pc, ownerTrait(w.cfg)); err != nil {
		return nil, fmt.Errorf("placement: %w", err)
	}
	rec, ok, err := eng.RecordNow(ctx, x.Node)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	if ok {
		x.Record = &rec
	}
	return x, nil
}

// unknownNode is a node neither the plugin lists nor this engine has a
// provider of: the API answers 404 (ops.ErrUnknownNode).
type unknownNode struct{ msg string }

func (e unknownNode) Error() string        { return e.msg }
func (e unknownNode) Is(target error) bool { return target == ops.ErrUnknownNode }

// explainNode finds node among the plan's outcomes and the listing.
func explainNode(node string, r engine.Report, src *recordingSource) (*explanation, error) {
	var x *explanation
	for _, o := range r.Outcomes {
		if matches(o, node) {
			x = &explanation{Node: o.Node, Name: o.Name, Outcome: o}
			break
		}
	}
	for i := range src.nodes {
		n := &src.nodes[i]
		if x == nil && (strings.EqualFold(n.UUID, node) || n.Name == node) {
			x = &explanation{Node: strings.ToLower(n.UUID), Name: n.Name}
		}
		if x != nil && strings.EqualFold(n.UUID, x.Node) {
			x.Source = n
		}
	}
	if x == nil {
		if len(r.Errors) > 0 && r.Errors[0].Kind == engine.ErrListing {
			return nil, fmt.Errorf("node %q: the plan could not list: %s", node, r.Errors[0].Message)
		}
		return nil, unknownNode{fmt.Sprintf("node %q: not listed by the plugin, and no provider of this engine has that uuid", node)}
	}
	var listed []string
	for _, in := range src.instances {
		if strings.EqualFold(in.NodeUUID, x.Node) {
			listed = append(listed, in.UUID)
		}
	}
	x.Why = ops.Explain(x.Source, x.Outcome, listed)
	x.Writes = slices.DeleteFunc(slices.Clone(r.Writes), func(w engine.Write) bool { return w.UUID != x.Node })
	x.Errors = slices.DeleteFunc(slices.Clone(r.Errors), func(e engine.Error) bool { return e.Node != x.Node })
	return x, nil
}

// readPlacement reads the node's provider: inventory, traits,
// aggregates, and each allocation with its consumer's type.
func (x *explanation) readPlacement(ctx context.Context, pc *placement.Client, owner string) error {
	p, err := pc.GetProvider(ctx, x.Node)
	if errors.Is(err, placement.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	v := &providerView{Name: p.Name, Generation: string(p.Generation)}
	if _, v.Inventory, err = pc.Inventories(ctx, x.Node); err != nil {
		return err
	}
	if _, v.Traits, err = pc.Traits(ctx, x.Node); err != nil {
		return err
	}
	if _, v.Aggregates, err = pc.Aggregates(ctx, x.Node); err != nil {
		return err
	}
	slices.Sort(v.Traits)
	slices.Sort(v.Aggregates)
	for _, t := range v.Traits {
		if strings.HasPrefix(t, engine.OwnerTraitPrefix) && t != owner {
			x.Owner = t
		}
	}
	if v.Allocations, err = readAllocations(ctx, pc, owner, x.Node); err != nil {
		return err
	}
	for _, a := range v.Allocations {
		if a.Hold {
			x.Holds = append(x.Holds, a.Consumer)
		}
	}
	x.Provider = v
	return nil
}

// readAllocations reads the allocations on node's provider, sorted by
// consumer, the first maxConsumers with their consumer's type and
// project (one request each).
func readAllocations(ctx context.Context, pc *placement.Client, owner, node string) ([]allocation, error) {
	allocs, err := pc.ProviderAllocations(ctx, node)
	if err != nil {
		return nil, err
	}
	hold := engine.HoldConsumer(owner, node)
	out := make([]allocation, 0, len(allocs))
	for c, res := range allocs {
		out = append(out, allocation{Consumer: c, Resources: res, Hold: c == hold})
	}
	slices.SortFunc(out, func(a, b allocation) int { return strings.Compare(a.Consumer, b.Consumer) })
	for i := range out[:min(len(out), maxConsumers)] {
		if got, err := pc.GetConsumer(ctx, out[i].Consumer); err == nil {
			out[i].Type, out[i].Project = got.Type, got.ProjectID
		}
	}
	return out, nil
}
