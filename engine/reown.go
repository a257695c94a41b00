package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rpengine/rpengine/engine/internal/record"
	"github.com/rpengine/rpengine/engine/placement"
)

// Recovery after a lost ownership record (engine reown).
//
// Without its record the engine only adds: it cannot tell a trait it
// added from an operator's, so a trait the source dropped stays for ever.
// Strays lists, as a plan, what on this engine's providers neither the
// source reports nor any record explains; Reown removes only what the
// operator picked from it, and records it as the engine's own first, so
// the removal is explained by the record like any other.

// Stray is a trait or aggregate on one of this engine's providers that
// neither the source reports nor the ownership record explains.
type Stray struct {
	Node  string `json:"node"`
	Name  string `json:"name,omitempty"` // the node's name at the source
	Kind  string `json:"kind"`           // "trait" or "aggregate"
	Value string `json:"value"`
}

// Strays lists the strays on the providers of the nodes in scope that
// carry this engine's owner marker, sorted by node, kind and value. It
// writes nothing.
func (e *Engine) Strays(ctx context.Context) ([]Stray, error) {
	nodes, err := e.src.ListNodes(ctx, e.pol.Scope.Request())
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	instances, err := e.src.ListInstances(ctx)
	if err != nil {
		return nil, fmt.Errorf("list instances: %w", err)
	}
	desired, _ := DesiredState(nodes, instances, e.pol)
	listed, err := e.newCycle().listOwned(ctx)
	if err != nil {
		return nil, fmt.Errorf("list providers: %w", err)
	}
	e.rec.Reload()
	shared, err := e.rec.Load(ctx)
	if err != nil {
		return nil, err
	}
	e.mergeShared(e.state, shared, desired, listed)
	var out []Stray
	for _, d := range desired {
		if _, ok := listed[d.UUID]; !ok {
			continue // not ours (yet): a cycle creates or takes it over
		}
		found, err := e.straysOf(ctx, d)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	return out, nil
}

// straysOf reads one provider and returns what nothing explains.
func (e *Engine) straysOf(ctx context.Context, d Desired) ([]Stray, error) {
	_, traits, err := e.pc.Traits(ctx, d.UUID)
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", d.UUID, err)
	}
	_, aggs, err := e.pc.Aggregates(ctx, d.UUID)
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", d.UUID, err)
	}
	rec, _ := e.state.get(d.UUID)
	var out []Stray
	for _, t := range sortedSet(traits) {
		if !slices.Contains(d.Traits, t) && !slices.Contains(rec.Managed.Traits, t) && !strings.HasPrefix(t, OwnerTraitPrefix) && t != "OWNER_NOVA" {
			out = append(out, Stray{Node: d.UUID, Name: d.NodeName, Kind: "trait", Value: t})
		}
	}
	for _, a := range sortedSet(aggs) {
		if !slices.Contains(d.Aggregates, a) && !slices.Contains(rec.Managed.Aggregates, a) {
			out = append(out, Stray{Node: d.UUID, Name: d.NodeName, Kind: "aggregate", Value: a})
		}
	}
	return out, nil
}

// Reown removes the strays given, which must come from Strays: first it
// records them as the engine's own (on disk, and in the shared record),
// then it writes each provider's traits and aggregates without them,
// generation-checked. It returns how many are gone from Placement.
func (e *Engine) Reown(ctx context.Context, remove []Stray) (int, error) {
	byNode := map[string][]Stray{}
	for _, s := range remove {
		byNode[s.Node] = append(byNode[s.Node], s)
	}
	w, err := e.rec.Intend(ctx, func(shared map[string][]byte) bool {
		ours := make(map[string]placement.Generation, len(byNode))
		for node := range byNode {
			ours[node] = "" // only a store given since Strays read one is due
		}
		e.mergeShared(e.state, shared, nil, ours)
		for node, ss := range byNode {
			e.state.update(node, func(k *known) {
				t, a := values(ss, "trait"), values(ss, "aggregate")
				k.Managed = Managed{Traits: union(k.Managed.Traits, t), Aggregates: union(k.Managed.Aggregates, a)}
			})
		}
		return len(byNode) > 0
	})
	if err != nil {
		return 0, fmt.Errorf("record before removing: %w", err)
	}
	removed := 0
	for _, node := range slices.Sorted(maps.Keys(byNode)) {
		if err := e.removeStrays(ctx, w, node, byNode[node]); err != nil {
			return removed, err
		}
		removed += len(byNode[node])
	}
	return removed, nil
}

// removeStrays writes one provider's traits and aggregates without ss,
// re-reading on a generation conflict.
func (e *Engine) removeStrays(ctx context.Context, w record.Writer, node string, ss []Stray) error {
	drop := func(have []string, kind string) []string {
		return slices.DeleteFunc(slices.Clone(have), func(v string) bool { return slices.Contains(values(ss, kind), v) })
	}
	err := e.retryOnConflict(ctx, func() error { return onConflict(e.removeOnce(ctx, w, node, drop)) })
	e.state.invalidate(node) // written: read again next cycle
	if err != nil {
		return fmt.Errorf("provider %s: remove strays: %w", node, err)
	}
	return nil
}

// removeOnce writes the traits, then the aggregates, without what drop
// drops, each with the generation its own read returned.
func (e *Engine) removeOnce(ctx context.Context, w record.Writer, node string, drop func([]string, string) []string) error {
	gen, traits, err := e.pc.Traits(ctx, node)
	if err != nil {
		return err
	}
	if keep := drop(traits, "trait"); len(keep) < len(traits) {
		if _, err = w.SetTraits(ctx, node, gen, keep); err != nil {
			return err
		}
	}
	gen, aggs, err := e.pc.Aggregates(ctx, node)
	if err != nil {
		return err
	}
	if keep := drop(aggs, "aggregate"); len(keep) < len(aggs) {
		_, err = w.SetAggregates(ctx, node, gen, keep)
	}
	return err
}

// values are the values of ss of kind.
func values(ss []Stray, kind string) []string {
	var out []string
	for _, s := range ss {
		if s.Kind == kind {
			out = append(out, s.Value)
		}
	}
	return sortedSet(out)
}
