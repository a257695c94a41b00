package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/hostabi"
)

func TestExplainNamesTheNodesZone(t *testing.T) {
	g := "rack-b"
	rules := engine.AggregateRules{{Zone: "az-b", ConductorGroup: &g, Aggregates: []string{"b0b0b0b0-0000-4000-8000-00000000000b"}}}
	x := &explanation{Source: &hostabi.Node{ConductorGroup: "rack-b"}}
	x.Zone = x.zoneOf(rules)
	var out bytes.Buffer
	x.renderZone(&out)
	want := `zone az-b: provider.aggregate_rules[0] (conductor_group="rack-b") puts it in b0b0b0b0-0000-4000-8000-00000000000b`
	if !strings.Contains(out.String(), want) {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
	if (&explanation{Source: &hostabi.Node{ConductorGroup: "rack-a"}}).zoneOf(rules) != nil || (&explanation{}).zoneOf(rules) != nil {
		t.Fatal("a zone for a node no rule matches, or for a node not listed")
	}
}
