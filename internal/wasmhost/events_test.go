package wasmhost_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
	"github.com/rpengine/rpengine/internal/testing/guesttest"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// liar is an event-capable plugin whose answers the host must check.
type liar struct {
	nodes  func(asked []string) []hostabi.Node
	insts  func(asked []string) []hostabi.Instance
	mapped func(hostabi.EventMessage) hostabi.MappedEvent
}

func (liar) Configure([]byte) (string, error) { return "liar", nil }
func (liar) ListNodes(hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	return []hostabi.Node{}, nil
}
func (liar) ListInstances() ([]hostabi.Instance, error)     { return []hostabi.Instance{}, nil }
func (l liar) ReadNodes(u []string) ([]hostabi.Node, error) { return l.nodes(u), nil }
func (l liar) ReadInstances(u []string) ([]hostabi.Instance, error) {
	return l.insts(u), nil
}
func (l liar) MapEvent(m hostabi.EventMessage) (hostabi.MappedEvent, error) { return l.mapped(m), nil }

const (
	u1 = "00000000-0000-4000-8000-000000000001"
	u2 = "00000000-0000-4000-8000-000000000002"
)

// The host rejects read_nodes and map_events answers that name what was
// not asked, name a node twice, or are not uuids: a plugin's answer
// about events can never make the engine write a node it did not ask for.
func TestEventAnswersAreChecked(t *testing.T) {
	ctx := context.Background()
	ok := liar{
		nodes:  func(a []string) []hostabi.Node { return []hostabi.Node{{UUID: a[0], ResourceClass: "x"}} },
		insts:  func(a []string) []hostabi.Instance { return []hostabi.Instance{{UUID: u2, NodeUUID: a[0]}} },
		mapped: func(hostabi.EventMessage) hostabi.MappedEvent { return hostabi.MappedEvent{Nodes: []string{u1}} },
	}
	load := func(l liar) *wasmhost.Plugin {
		return guesttest.NativeLoader(func() guest.Plugin { return l }, wasmhost.Options{}).OK(t, nil)
	}
	p := load(ok)
	if !p.Supports(hostabi.ExportMapEvents) || !p.Supports(hostabi.ExportReadNodes) {
		t.Fatalf("event operations not detected: %v", p.Info().Operations)
	}
	if n, err := p.ReadNodes(ctx, []string{u1}); err != nil || len(n) != 1 {
		t.Fatalf("honest read: %v, %v", n, err)
	}
	if in, err := p.ReadInstances(ctx, []string{u1}); err != nil || len(in) != 1 {
		t.Fatalf("honest instances: %v, %v", in, err)
	}
	if m, err := p.MapEvents(ctx, []hostabi.EventMessage{{Body: "{}"}}); err != nil || len(m) != 1 || m[0].Nodes[0] != u1 {
		t.Fatalf("honest map: %v, %v", m, err)
	}
	cases := map[string]struct {
		l    liar
		call func(*wasmhost.Plugin) error
		want string
	}{
		"node not asked": {liar{nodes: func([]string) []hostabi.Node { return []hostabi.Node{{UUID: u2}} }}, func(p *wasmhost.Plugin) error {
			_, err := p.ReadNodes(ctx, []string{u1})
			return err
		}, "which was not asked"},
		"node twice": {liar{nodes: func(a []string) []hostabi.Node { return []hostabi.Node{{UUID: a[0]}, {UUID: strings.ToUpper(a[0])}} }}, func(p *wasmhost.Plugin) error {
			_, err := p.ReadNodes(ctx, []string{u1})
			return err
		}, "answered twice"},
		"instance elsewhere": {liar{insts: func([]string) []hostabi.Instance { return []hostabi.Instance{{UUID: u1, NodeUUID: u2}} }}, func(p *wasmhost.Plugin) error {
			_, err := p.ReadInstances(ctx, []string{u1})
			return err
		}, "which was not asked"},
		"not a uuid": {liar{mapped: func(hostabi.EventMessage) hostabi.MappedEvent { return hostabi.MappedEvent{Nodes: []string{"../x"}} }}, func(p *wasmhost.Plugin) error {
			_, err := p.MapEvents(ctx, []hostabi.EventMessage{{Body: "{}"}})
			return err
		}, "not a uuid"},
	}
	for name, c := range cases {
		err := c.call(load(c.l))
		if !wasmhost.IsKind(err, wasmhost.KindBadAnswer) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a bad_answer naming %q", name, err, c.want)
		}
	}
}

// recent is a plugin with the probe operation, answering what it is told.
type recent struct {
	liar
	uuids, changed []string
}

func (r recent) RecentNodes(int) ([]string, []string, error) { return r.uuids, r.changed, nil }

// The host refuses a recent_nodes answer it cannot pair or trust whole:
// more uuids than asked, a stamp missing, empty or too long, a uuid
// malformed or twice.
func TestRecentNodesAnswersAreChecked(t *testing.T) {
	ctx := context.Background()
	load := func(r recent) *wasmhost.Plugin {
		return guesttest.NativeLoader(func() guest.Plugin { return r }, wasmhost.Options{}).OK(t, nil)
	}
	u, c, err := load(recent{uuids: []string{strings.ToUpper(u1), u2}, changed: []string{"b", "a"}}).RecentNodes(ctx, 2)
	if err != nil || len(u) != 2 || u[0] != u1 || c[1] != "a" {
		t.Fatalf("honest answer: %v %v %v", u, c, err)
	}
	long := strings.Repeat("x", hostabi.MaxChangedLength+1)
	for name, r := range map[string]recent{
		"over the limit": {uuids: []string{u1, u2}, changed: []string{"a", "b"}},
		"stamp missing":  {uuids: []string{u1}, changed: []string{}},
		"stamp empty":    {uuids: []string{u1}, changed: []string{""}},
		"stamp too long": {uuids: []string{u1}, changed: []string{long}},
		"not a uuid":     {uuids: []string{"../x"}, changed: []string{"a"}},
		"answered twice": {uuids: []string{u1, strings.ToUpper(u1)}, changed: []string{"a", "b"}},
	} {
		limit := 2
		if name == "over the limit" {
			limit = 1
		}
		if _, _, err := load(r).RecentNodes(ctx, limit); !wasmhost.IsKind(err, wasmhost.KindBadAnswer) {
			t.Errorf("%s: %v, want a bad_answer", name, err)
		}
	}
}
