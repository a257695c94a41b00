package main

import (
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/config"
)

// Two engines of one fleet beside nova print the same text: one file for
// nova, each node defined once, the fleet's marker on it, and no engine's
// own; a conductor group as the fleet's scope is nova's partition_key, so
// $COMPUTE_NODE names the nodes enrolled later too.
func TestNovaConfigForAFleet(t *testing.T) {
	fleetCfg := func(id string, groups ...string) *config.Config {
		cfg := &config.Config{}
		cfg.Engine.ID = id
		cfg.Coord = config.Coord{Etcd: []string{"http://127.0.0.1:2379"}, Prefix: "/rpengine/", Partitions: 8, Backend: config.BackendEtcd}
		cfg.Nova.Beside = true
		cfg.Nova.ComputeHosts = []string{"compute-a"}
		cfg.Scope.ConductorGroups = groups
		return cfg
	}
	nodes := []string{"00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"}
	a, b := novaConfigText(fleetCfg("e1"), nodes), novaConfigText(fleetCfg("e2"), nodes)
	if a != b {
		t.Fatalf("two engines of one fleet print different configs:\n%s\n---\n%s", a, b)
	}
	marker := ownerTrait(fleetCfg("e1"))
	if !strings.HasPrefix(marker, "CUSTOM_RPENGINE_OWNER_FLEET_") || !strings.Contains(a, "- "+marker+"\n") ||
		strings.Contains(a, "CUSTOM_RPENGINE_OWNER_E1") || strings.Count(a, nodes[0]) != 1 {
		t.Errorf("fleet printout (marker %s):\n%s", marker, a)
	}
	if scoped(fleetCfg("e1")) {
		t.Error("partitions divide the fleet among engines, not the nodes nova marks")
	}
	group := fleetCfg("e1", "rack-1")
	if g, ok := novaPartition(group); !ok || g != "rack-1" {
		t.Fatal("a fleet of one conductor group is nova's partition_key")
	}
	if text := novaConfigText(group, nil); !strings.Contains(text, "partition_key = rack-1\n") || !strings.Contains(text, "'$COMPUTE_NODE'") {
		t.Errorf("one group:\n%s", text)
	}
}
