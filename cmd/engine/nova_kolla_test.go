package main

import (
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/config"
)

// kolla-ansible's layout: one nova-compute-ironic per <group>-<shard>. With
// that as the engine's whole scope, nova >= 28's [ironic] shard and
// conductor_group make '$COMPUTE_NODE' name exactly the engine's nodes (no
// restart at enrolment); nova < 28 gets the nodes by uuid instead.
func TestNovaConfigKollaShard(t *testing.T) {
	cfg := &config.Config{}
	cfg.Engine.ID = "az1"
	cfg.Scope.ConductorGroups = []string{"rack-1"}
	cfg.Scope.Shards = []string{"s1"}
	text := novaConfigText(cfg, []string{"00000000-0000-4000-8000-000000000001"})
	shardPart, oldPart, ok := strings.Cut(text, "# --- nova < 28")
	if !ok {
		t.Fatalf("no nova < 28 alternative in:\n%s", text)
	}
	for _, want := range []string{"host = rack-1-s1-ironic\n", "[ironic]\n", "shard = s1\nconductor_group = rack-1\n", "uuid: '$COMPUTE_NODE'"} {
		if !strings.Contains(shardPart, want) {
			t.Errorf("missing %q before the nova < 28 part:\n%s", want, text)
		}
	}
	if strings.Contains(shardPart, "partition_key") || strings.Contains(shardPart, "00000000-") {
		t.Errorf("the nova >= 28 part names a partition_key or a node uuid:\n%s", shardPart)
	}
	if !strings.Contains(oldPart, "uuid: 00000000-0000-4000-8000-000000000001\n") || strings.Contains(oldPart, "$COMPUTE_NODE") {
		t.Errorf("the nova < 28 part does not list the nodes by uuid alone:\n%s", oldPart)
	}

	// The default group is not set, as kolla leaves it out.
	cfg.Scope.ConductorGroups = []string{"default"}
	if text := novaConfigText(cfg, []string{}); strings.Contains(text, "conductor_group =") || !strings.Contains(text, "host = default-s1-ironic\n") {
		t.Errorf("default group:\n%s", text)
	}
	// Two shards are no single nova-compute's: no shard lines.
	cfg.Scope.Shards = []string{"s1", "s2"}
	if text := novaConfigText(cfg, []string{}); strings.Contains(text, "shard =") {
		t.Errorf("two shards printed shard lines:\n%s", text)
	}
}
