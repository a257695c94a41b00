package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/rpengine/rpengine/engine/baremetal"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
)

// Desired is what one provider should look like. Traits and Aggregates
// are the managed sets: what the engine adds; it leaves others alone.
type Desired struct {
	UUID       string
	Name       string
	Inventory  map[string]placement.Inventory
	Traits     []string
	Aggregates []string
	Reserved   baremetal.ReservedReason
	NodeName   string // the node's name at the source, for reading
	// Hold is the class a hold allocation keeps in use, beside nova only
	// (hold.go); "" means no hold.
	Hold string
	// Whole says the node is one unit (bare metal): an allocation of any
	// class occupies all of it, so a class still in use after a class
	// change keeps every class reserved (withRetained).
	Whole bool
}

// Problem is a node the engine will not write, and why; or, with Code
// "invalid_traits", part of a node's data it leaves out.
type Problem struct {
	NodeUUID string
	Reason   string
	Code     string // short and fixed: duplicate, bad_uuid, no_class, ...
	NodeName string
}

// Quarantined says whether the node is left out entirely.
func (p Problem) Quarantined() bool { return p.Code != CodeInvalidTraits }

// Problem codes.
const (
	CodeDuplicate         = "duplicate"           // listed more than once
	CodeBadUUID           = "bad_uuid"            // not a UUID
	CodeClassAndResources = "class_and_resources" // both a resource class and resources
	CodeNoClass           = "no_class"            // neither a resource class nor resources
	CodeBadClass          = "bad_class"           // class normalises to an invalid name
	CodeBadResources      = "bad_resources"       // an explicit inventory Placement would refuse
	CodeInvalidTraits     = "invalid_traits"      // some traits invalid: left out, the rest written
	// The host's codes for a record over a per-node limit (hostabi.Invalid).
	CodeFieldTooLong   = hostabi.InvalidFieldTooLong   // a string or number over plugin.max_field_length
	CodeTooManyEntries = hostabi.InvalidTooManyEntries // traits or resources over plugin.max_traits
	CodeBadUTF8        = hostabi.InvalidUTF8           // a string that is not UTF-8
	CodeBadValue       = hostabi.InvalidValue          // a value of the wrong type
)

// problem is an error of desiredProvider with its code.
type problem struct {
	code string
	err  error
}

func (p problem) Error() string { return p.err.Error() }
func (p problem) Unwrap() error { return p.err }

func coded(code string, err error) error { return problem{code, err} }

func codeOf(err error) string {
	var p problem
	if errors.As(err, &p) {
		return p.code
	}
	return CodeBadResources
}

// String names the node and the reason, as reports print it.
func (p Problem) String() string { return fmt.Sprintf("node %s: %s", cut(p.NodeUUID), p.Reason) }

// cutList is the first few of ss, each cut, and a count of the rest.
func cutList(ss []string) []string {
	const n = 5
	out := make([]string, 0, n+1)
	for _, s := range ss[:min(len(ss), n)] {
		out = append(out, cut(s))
	}
	if len(ss) > n {
		out = append(out, fmt.Sprintf("and %d more", len(ss)-n))
	}
	return out
}

// cut is a value from a plugin as an error may quote it: a short prefix
// that says how long the whole was, so a megabyte uuid makes a short line.
func cut(s string) string {
	const n = 64
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("%s... (%d bytes)", s[:n], len(s))
}

// Policy is the part of the configuration the desired state depends on.
type Policy struct {
	OwnerTrait string // marks providers this engine created
	// FleetMarker: OwnerTrait is the fleet's, shared by every engine that
	// divides it by partitions beside nova (fleet.go); this engine's
	// providers are those of the partitions it holds.
	FleetMarker  bool
	MarkerTraits []string // added to every provider, e.g. COMPUTE_NODE
	Aggregates   []string // added to every provider
	Scope        Scope
	// MayTakeOver says whether a provider marked by another owner (its
	// owner trait) may be taken: only when this engine holds the node's
	// partition and that owner no longer does. nil: never.
	MayTakeOver func(owner string) bool
	// Nova is set when nova-compute writes the same providers (nova.go).
	Nova Beside

	// AggregateRules add aggregates by the node's fields (aggregates.go).
	AggregateRules AggregateRules
}

// nodeKey is a node's lowercased uuid and its index in the listing.
type nodeKey struct {
	id string
	i  int
}

// byUUID returns the nodes' keys in uuid order. DesiredState visits nodes
// so, and the result comes out sorted and a uuid listed twice is a run of
// equal keys: at 100,000 nodes sorting small keys instead of the results,
// and no set of seen uuids, took a third off DesiredState.
func byUUID(nodes []hostabi.Node) []nodeKey {
	keys := make([]nodeKey, len(nodes))
	for i, n := range nodes {
		keys[i] = nodeKey{strings.ToLower(n.UUID), i}
	}
	slices.SortFunc(keys, func(a, b nodeKey) int { return strings.Compare(a.id, b.id) })
	return keys
}

// byUUIDAgain is byUUID for nodes that may come in the order of the last
// cycle's, whose keys (their ids cleared) are last: a source lists its
// nodes in a stable order, so one pass that finds the old order still
// strictly sorted replaces a sort of 100,000 strings. Anything else, a
// node more or less, moved or repeated, is sorted anew.
func byUUIDAgain(nodes []hostabi.Node, last []nodeKey) []nodeKey {
	if len(last) != len(nodes) {
		return byUUID(nodes)
	}
	for j := range last {
		last[j].id = strings.ToLower(nodes[last[j].i].UUID)
		if j > 0 && last[j-1].id >= last[j].id {
			return byUUID(nodes)
		}
	}
	return last
}

// order returns the nodes' keys in uuid order, and whether they are
// strictly sorted (no uuid twice). When the nodes' uuids are those of the
// last cycle that found its keys strictly sorted, in the same order (one
// pass in the nodes' order against l.ids), the last keys are reused as
// they are: visiting 100,000 nodes in uuid order, scattered through the
// heap, to check the order was a tenth of an idle cycle.
func (l *spareLists) order(nodes []hostabi.Node) ([]nodeKey, bool) {
	if l.strict && len(l.keys) == len(nodes) && len(l.ends) == len(nodes) {
		same, from := true, 0
		for i, n := range nodes {
			id := l.ids[from:l.ends[i]] // compared as string(id): no copy
			if from = l.ends[i]; string(id) != n.UUID && string(id) != strings.ToLower(n.UUID) {
				same = false
				break
			}
		}
		if same { // the keys' ids are set by inNodeOrder, which reads each node once
			for j, k := range l.keys {
				l.at[k.i] = int32(j)
			}
			return l.keys, true
		}
	}
	keys := byUUIDAgain(nodes, l.keys)
	if l.once {
		return keys, false
	}
	l.ids, l.ends, l.at = l.ids[:0], l.ends[:0], slices.Grow(l.at[:0], len(nodes))[:len(nodes)]
	for _, n := range nodes {
		l.ids = append(l.ids, strings.ToLower(n.UUID)...)
		l.ends = append(l.ends, len(l.ids))
	}
	return keys, false
}

// DesiredState is a pure function of the nodes, the instances and the
// policy. Nodes out of scope are left out (and so left alone); nodes with
// unusable data are reported as problems and left out too, so bad input
// from a plugin changes nothing in Placement.
func DesiredState(nodes []hostabi.Node, instances []hostabi.Instance, pol Policy) ([]Desired, []Problem) {
	return desiredState(nodes, instances, pol, &spareLists{once: true})
}

// desiredState is DesiredState written into last's lists, which it
// leaves holding this call's (spareDesired).
func desiredState(nodes []hostabi.Node, instances []hostabi.Instance, pol Policy, last *spareLists) ([]Desired, []Problem) {
	occupied := make(map[string]bool, len(instances))
	for _, in := range instances {
		occupied[strings.ToLower(in.NodeUUID)] = true
	}
	keys, strict := last.order(nodes)
	out := slices.Grow(last.desired[:0], len(nodes))
	dup := false
	defer func() { last.desired, last.keys, last.strict = out, keys, !dup }()
	var problems []found
	shared := newShared(pol)
	if strict {
		out = inNodeOrder(nodes, keys, last.at, occupied, pol, shared, out, &problems)
	}
	for j := 0; j < len(keys) && !strict; {
		run := 1 // nodes with this uuid
		for j+run < len(keys) && keys[j+run].id == keys[j].id {
			run++
		}
		dup = dup || run > 1
		for _, k := range keys[j : j+run] {
			n := &nodes[k.i]
			if !pol.Scope.contains(n) {
				continue
			}
			if run > 1 {
				problems = append(problems, found{k.i, Problem{NodeUUID: cut(n.UUID), NodeName: cut(n.Name), Code: CodeDuplicate,
					Reason: fmt.Sprintf("reported %d times; contradictory data is not written", run)}})
				continue
			}
			if d, ok := desiredOne(n, k, occupied[k.id], &pol, shared, &problems); ok {
				out = append(out, d)
			}
		}
		j += run
	}
	// Problems in the source's order, as before the sort.
	slices.SortStableFunc(problems, func(a, b found) int { return a.i - b.i })
	var ps []Problem
	for _, f := range problems {
		ps = append(ps, f.p)
	}
	return out, ps
}

// found is a problem of node i of the listing.
type found struct {
	i int
	p Problem
}

// desiredOne derives the provider of node n, whose key is k (its
// lowercased uuid and index), and says whether it is to be written; its
// problem, if any, joins problems.
func desiredOne(n *hostabi.Node, k nodeKey, hasInstance bool, pol *Policy, sh *shared, problems *[]found) (Desired, bool) {
	i := k.i
	d, err := desiredProvider(n, k.id, hasInstance, pol, sh)
	if err != nil {
		*problems = append(*problems, found{i, Problem{NodeUUID: cut(n.UUID), NodeName: cut(n.Name), Code: codeOf(err), Reason: err.Error()}})
		return d, false
	}
	if _, bad := validTraits(n.Traits); len(bad) > 0 {
		*problems = append(*problems, found{i, Problem{NodeUUID: cut(n.UUID), NodeName: cut(n.Name), Code: CodeInvalidTraits,
			Reason: fmt.Sprintf("invalid traits %q left out; the rest are written", cutList(bad))}})
	}
	return d, true
}

// inNodeOrder is desiredState's loop for keys strictly sorted (no uuid
// twice) whose ranks are at (node index -> rank): it reads the nodes in
// their own order, not scattered through the heap in uuid order, writes
// each provider at its node's rank, then closes the gaps the nodes left
// out leave. The result is the loop's in uuid order. It sets each key's
// id (the node's lowercased uuid) as it reads the node: one visit of each
// uuid, not one to set the keys and another to derive the provider.
func inNodeOrder(nodes []hostabi.Node, keys []nodeKey, at []int32, occupied map[string]bool, pol Policy, sh *shared, out []Desired, problems *[]found) []Desired {
	out = out[:len(keys)]
	keep := make([]bool, len(keys))
	for i := range nodes {
		n := &nodes[i]
		j := at[i]
		keys[j].id = strings.ToLower(n.UUID)
		if !pol.Scope.contains(n) {
			continue
		}
		if d, ok := desiredOne(n, keys[j], occupied[keys[j].id], &pol, sh, problems); ok {
			out[j], keep[j] = d, true
		}
	}
	w := 0
	for j := range out {
		if keep[j] {
			out[w] = out[j]
			w++
		}
	}
	clear(out[w:]) // no copy left to keep a node's strings alive
	return out[:w]
}

// desiredProvider derives node n's provider; id is its uuid lowercased.
// The node and the policy are read in place, not copied (each a few
// hundred bytes, for every node of every cycle).
func desiredProvider(n *hostabi.Node, id string, hasInstance bool, pol *Policy, sh *shared) (Desired, error) {
	if n.Invalid != nil { // the host cut this record short: none of it is trusted
		return Desired{}, coded(n.Invalid.Code, fmt.Errorf("%s; quarantined until the source reports it within the limits", n.Invalid.Reason))
	}
	if !hostabi.ValidUUID(n.UUID) {
		return Desired{}, coded(CodeBadUUID, fmt.Errorf("uuid %q is not a UUID", cut(n.UUID)))
	}
	d := Desired{UUID: id, Aggregates: sh.aggregatesOf(n), NodeName: n.Name}
	d.Name = d.UUID
	var err error
	switch {
	case n.ResourceClass != "" && len(n.Resources) > 0:
		return d, coded(CodeClassAndResources, fmt.Errorf("has both resource_class and resources; a node is bare metal or not"))
	case n.ResourceClass != "":
		d.Whole = true
		d.Reserved = baremetal.Reservation(*n, hasInstance)
		d.Inventory, err = sh.bareMetal(n.ResourceClass, pol.Nova.reservedInventory(n, d.Reserved))
		if pol.Nova.Enabled { // the class name is worked out only when a hold may need it
			d.Hold = pol.Nova.hold(*n, d.Reserved, baremetal.NormalizeResourceClass(n.ResourceClass))
		}
	case len(n.Resources) > 0:
		d.Reserved = baremetal.Disabled(*n)
		d.Inventory, err = explicitInventory(n.Resources, d.Reserved)
	default:
		return d, coded(CodeNoClass, fmt.Errorf("no resource_class and no resources: quarantined until the source reports one"))
	}
	if err != nil {
		return d, err
	}
	d.Traits = sh.base
	if len(n.Traits) > 0 {
		good, _ := validTraits(n.Traits)
		d.Traits = sortedSet(append(slices.Clone(sh.base), good...))
	}
	return d, nil
}

// shared holds the values most providers have in common, built once per
// cycle: at 10,000 nodes a map and two slices per node were a large part
// of an idle cycle. Desired values are never modified after they are
// built, so sharing them is safe.
type shared struct {
	base, aggregates []string
	inventories      map[inventoryKey]map[string]placement.Inventory
	// The aggregate rules, each one's aggregates and class (aggregates.go).
	rules       AggregateRules
	byRule      [][]string
	ruleClasses []string
	classNames  map[string]string
}

type inventoryKey struct {
	class    string
	reserved bool
}

func newShared(pol Policy) *shared {
	sh := &shared{
		base:        sortedSet(append([]string{pol.OwnerTrait}, pol.MarkerTraits...)),
		aggregates:  sortedSet(pol.Aggregates),
		inventories: map[inventoryKey]map[string]placement.Inventory{},
		rules:       pol.AggregateRules,
	}
	sh.byRule, sh.ruleClasses = ruleAggregates(pol)
	return sh
}

func (sh *shared) bareMetal(rc string, reserved bool) (map[string]placement.Inventory, error) {
	key := inventoryKey{rc, reserved}
	if inv, ok := sh.inventories[key]; ok {
		return inv, nil
	}
	name := baremetal.NormalizeResourceClass(rc)
	if err := baremetal.ValidCustomName(name); err != nil {
		return nil, coded(CodeBadClass, fmt.Errorf("resource class %q normalises to an invalid name: %w", cut(rc), err))
	}
	rec := placement.Inventory{Total: 1, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1}
	if reserved {
		rec.Reserved = 1
	}
	inv := map[string]placement.Inventory{name: rec}
	sh.inventories[key] = inv
	return inv, nil
}

func explicitInventory(res map[string]hostabi.Resource, why baremetal.ReservedReason) (map[string]placement.Inventory, error) {
	out := make(map[string]placement.Inventory, len(res))
	for rc, r := range res {
		if err := baremetal.ValidTraitName(rc); err != nil { // same pattern as classes
			return nil, fmt.Errorf("resource class %q is not a valid Placement name", cut(rc))
		}
		inv := placement.Inventory{Total: r.Total, Reserved: r.Reserved, MinUnit: r.MinUnit,
			MaxUnit: r.MaxUnit, StepSize: r.StepSize, AllocationRatio: r.AllocationRatio}
		defaults(&inv)
		if err := checkInventory(inv); err != nil {
			return nil, fmt.Errorf("resource %s: %w", rc, err)
		}
		if why != baremetal.Schedulable {
			inv.Reserved = inv.Total
		}
		out[rc] = inv
	}
	return out, nil
}

func defaults(inv *placement.Inventory) {
	if inv.MinUnit == 0 {
		inv.MinUnit = 1
	}
	if inv.MaxUnit == 0 {
		inv.MaxUnit = inv.Total
	}
	if inv.StepSize == 0 {
		inv.StepSize = 1
	}
	if inv.AllocationRatio == 0 {
		inv.AllocationRatio = 1
	}
}

// checkInventory applies Placement's schema locally, so a bad record is
// reported once instead of rejected on every cycle.
func checkInventory(inv placement.Inventory) error {
	const maxInt = 2147483647
	switch {
	case inv.Total < 1 || inv.Total > maxInt:
		return fmt.Errorf("total %d outside 1..%d", inv.Total, maxInt)
	case inv.Reserved < 0 || inv.Reserved > inv.Total:
		return fmt.Errorf("reserved %d outside 0..total", inv.Reserved)
	case inv.MinUnit < 1 || inv.MaxUnit < inv.MinUnit || inv.MaxUnit > maxInt:
		return fmt.Errorf("min_unit %d / max_unit %d invalid", inv.MinUnit, inv.MaxUnit)
	case inv.StepSize < 1 || inv.StepSize > maxInt:
		return fmt.Errorf("step_size %d invalid", inv.StepSize)
	case inv.AllocationRatio <= 0:
		return fmt.Errorf("allocation_ratio %v must be positive", inv.AllocationRatio)
	}
	return nil
}

// validTraits keeps the valid names; invalid ones never reach Placement
// (one bad trait must not block the node's other traits every cycle).
func validTraits(ts []string) (good, bad []string) {
	good = make([]string, 0, len(ts))
	for _, t := range ts {
		if baremetal.ValidTraitName(t) == nil {
			good = append(good, t)
		} else {
			bad = append(bad, t)
		}
	}
	return good, bad
}

func sortedSet(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// spareDesired keeps a cycle's lists for the next cycle to write into:
// at 100,000 nodes the desired list is 14 MB, a fifth of what an idle
// cycle allocated, and so of the garbage collections it paid for; the
// node order saves the next cycle its sort. They are cleared when given
// back, so they keep no node's strings alive.
type spareDesired struct {
	mu    sync.Mutex
	lists spareLists
}

// spareLists are the desired list and the nodes' keys in uuid order;
// ids are the nodes' lowercased uuids one after the other in the nodes'
// order (ends[i] ends node i's), strict says the keys held no uuid twice,
// at is scratch for order. None holds a pointer: they keep no node's
// strings alive and cost the garbage collector nothing to scan.
type spareLists struct {
	desired []Desired
	keys    []nodeKey
	ids     []byte
	ends    []int
	at      []int32
	strict  bool
	once    bool // not kept for another call: ids not recorded
}

// take returns the spare lists (empty if none, or another cycle has them).
func (s *spareDesired) take() *spareLists {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.lists
	s.lists = spareLists{}
	return &l
}

// give hands the lists back once nothing uses them any more.
func (s *spareDesired) give(l *spareLists) {
	if l == nil { // a run that took none (named nodes, a node sync)
		return
	}
	clear(l.desired[:cap(l.desired)])
	for i := range l.keys {
		l.keys[i].id = ""
	}
	s.mu.Lock()
	s.lists = *l
	s.mu.Unlock()
}
