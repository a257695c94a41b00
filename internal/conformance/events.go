package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rpengine/rpengine/hostabi"
)

// The checks of the event capability (hostabi.ExportMapEvents and
// ExportReadNodes), run after confirm_deleted. They live here, apart
// from the listing checks, and add themselves to the suite.
func init() {
	i := slices.IndexFunc(checks, func(c check) bool { return c.name == "answer_time" })
	if i < 0 {
		i = len(checks)
	}
	checks = slices.Insert(checks, i,
		check{"events_pair", false, checkEventsPair},
		check{"read_nodes", false, checkReadNodes},
		check{"map_events", false, checkMapEvents})
}

// checkEventsPair: a plugin offers both event operations or neither; the
// engine uses events only with both.
func checkEventsPair(_ context.Context, s *suite) error {
	m, r := s.plugin.Supports(hostabi.ExportMapEvents), s.plugin.Supports(hostabi.ExportReadNodes)
	switch {
	case !m && !r:
		return skip("the plugin does not support events")
	case m != r:
		return fmt.Errorf("map_events supported: %v, read_nodes supported: %v; the engine needs both", m, r)
	}
	return nil
}

// checkReadNodes: reading some listed nodes and a random uuid gives
// exactly those nodes, equal to the listing's, and the instances the
// listing put on them.
func checkReadNodes(ctx context.Context, s *suite) error {
	if !s.plugin.Supports(hostabi.ExportReadNodes) {
		return skip("the plugin does not support read_nodes")
	}
	if s.nodes == nil {
		return skip("no first listing")
	}
	ask := []string{randomUUID()}
	for _, n := range s.nodes[:min(len(s.nodes), 5)] {
		ask = append(ask, n.UUID)
	}
	var nodes []hostabi.Node
	var insts []hostabi.Instance
	err := s.timed("read_nodes", func() (err error) {
		if nodes, err = s.plugin.ReadNodes(ctx, ask); err == nil {
			insts, err = s.plugin.ReadInstances(ctx, ask)
		}
		return err
	})
	if err != nil {
		return err
	}
	key := func(n hostabi.Node) string { return strings.ToLower(n.UUID) }
	if d := diff(byUUID(s.nodes[:len(ask)-1], key), byUUID(nodes, key)); d != "" {
		return fmt.Errorf("read nodes differ from the listing (a random uuid asked too): %s", d)
	}
	var want []hostabi.Instance
	for _, in := range s.insts {
		if slices.ContainsFunc(ask[1:], func(u string) bool { return strings.EqualFold(u, in.NodeUUID) }) {
			want = append(want, in)
		}
	}
	ikey := func(i hostabi.Instance) string { return i.UUID }
	if d := diff(byUUID(want, ikey), byUUID(insts, ikey)); d != "" {
		return fmt.Errorf("instances read differ from the listing's on those nodes: %s", d)
	}
	s.note = fmt.Sprintf("asked %d: %d nodes, %d instances", len(ask), len(nodes), len(insts))
	return nil
}

// checkMapEvents: messages that are not the source's (garbage, an empty
// object, a text) name no node: a stranger on the bus costs at most a
// full cycle, and one answer comes back per message.
func checkMapEvents(ctx context.Context, s *suite) error {
	if !s.plugin.Supports(hostabi.ExportMapEvents) {
		return skip("the plugin does not support map_events")
	}
	msgs := []hostabi.EventMessage{{Body: "not json"}, {Body: "{}"}, {Body: `"text"`}, {Body: "[1,2]"},
		{Body: `{"oslo.version":"2.0","oslo.message":"{}"}`}}
	var got []hostabi.MappedEvent
	err := s.timed("map_events", func() (err error) {
		got, err = s.plugin.MapEvents(ctx, msgs)
		return err
	})
	if err != nil {
		return err
	}
	var bad []string
	for i, e := range got {
		if len(e.Nodes) > 0 {
			bad = append(bad, fmt.Sprintf("%q mapped to nodes %v", msgs[i].Body, e.Nodes))
		}
	}
	if len(bad) > 0 {
		return errors.New(examples(bad))
	}
	return nil
}
