package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// The printout names the owner marker and only custom marker traits (nova
// refuses others), $COMPUTE_NODE without a scope and each node with one.
func TestNovaConfigText(t *testing.T) {
	cfg := &config.Config{}
	cfg.Engine.ID = "Rack-7"
	cfg.Provider.MarkerTraits = []string{"COMPUTE_NODE", "CUSTOM_BM", "HW_CPU_X86_AVX2"}
	cfg.Nova.SkipReserveInUse = true
	all := novaConfigText(cfg, nil)
	for _, want := range []string{
		"provider_config_location = /etc/nova/provider_config\n",
		"skip_reserve_in_use_ironic_nodes = true\n",
		"# --- /etc/nova/provider_config/rpengine-rack-7.yaml ---\nmeta:\n  schema_version: '1.0'\nproviders:\n",
		"  - identification:\n      uuid: '$COMPUTE_NODE'\n    traits:\n      additional:\n        - CUSTOM_BM\n        - CUSTOM_RPENGINE_OWNER_RACK_7\n",
		"WARNING: marker trait HW_CPU_X86_AVX2",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q in:\n%s", want, all)
		}
	}
	if strings.Contains(all, "- COMPUTE_NODE") {
		t.Error("a standard trait in the provider config: nova refuses the file")
	}
	some := novaConfigText(cfg, []string{"00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"})
	if strings.Contains(some, "$COMPUTE_NODE") || strings.Count(some, "identification") != 2 ||
		!strings.Contains(some, "uuid: 00000000-0000-4000-8000-000000000002\n") {
		t.Errorf("scoped printout:\n%s", some)
	}
	if none := novaConfigText(cfg, []string{}); !strings.Contains(none, "\n  []  # no node") {
		t.Errorf("empty scope:\n%s", none)
	}
}

// With one conductor group as the whole scope, nova's partition_key serves
// exactly the engine's nodes: $COMPUTE_NODE covers nodes enrolled later,
// and peer_list (nova refuses partition_key without it) is printed too.
func TestNovaConfigPartition(t *testing.T) {
	cfg := &config.Config{}
	cfg.Engine.ID = "g"
	cfg.Scope.ConductorGroups = []string{"rack-1"}
	cfg.Nova.ComputeHosts = []string{"compute-a", "compute-b"}
	if _, ok := novaPartition(cfg); !ok {
		t.Fatal("one conductor group is a partition")
	}
	text := novaConfigText(cfg, nil)
	for _, want := range []string{"[ironic]\n", "partition_key = rack-1\npeer_list = compute-a,compute-b\n", "uuid: '$COMPUTE_NODE'"} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	cfg.Scope.Shards = []string{"s1"}
	if _, ok := novaPartition(cfg); ok {
		t.Error("a group and a shard are not what one partition_key serves")
	}
}

// Without compute_hosts, nova-config refuses a conductor-group scope
// rather than print lines nova would not start with.
func TestNovaConfigNeedsComputeHosts(t *testing.T) {
	dir := t.TempDir()
	path := daemonConfig(t, dir, "[placement]\nendpoint = \"http://127.0.0.1:1\"\n", "[scope]\nconductor_groups = [\"rack-1\"]\n[nova]\nbeside = true\n")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"nova-config", "--config", path}, &out, &errb)
	if code == 0 || !strings.Contains(errb.String(), "[nova] compute_hosts") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

// validate warns when providers carry OWNER_NOVA (nova >= 34 reports here)
// and this engine, alone, does not mark its own with it: nova's
// owner_nova_filter would hide them. With the marker, no warning.
func TestValidateWarnsOfOwnerNovaFilter(t *testing.T) {
	fake := placementfake.New()
	t.Cleanup(fake.Close)
	if err := fake.CreateProvider("00000000-0000-4000-8000-0000000000aa", "nova-34-node"); err != nil {
		t.Fatal(err)
	}
	if err := fake.AddTrait("00000000-0000-4000-8000-0000000000aa", "OWNER_NOVA"); err != nil {
		t.Fatal(err)
	}
	placementTOML := fmt.Sprintf("[placement]\nendpoint = %q\ntoken = \"admin\"\n", fake.URL())
	for _, markers := range []string{`["COMPUTE_NODE"]`, `["COMPUTE_NODE", "OWNER_NOVA"]`} {
		path := daemonConfig(t, t.TempDir(), placementTOML, "")
		text, _ := os.ReadFile(path)
		os.WriteFile(path, []byte(strings.Replace(string(text), `marker_traits = ["COMPUTE_NODE"]`, "marker_traits = "+markers, 1)), 0o644)
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"validate", "--config", path}, &out, &errb)
		warned := strings.Contains(out.String(), "warn  1 providers carry OWNER_NOVA")
		if code != 0 || warned != (markers == `["COMPUTE_NODE"]`) {
			t.Errorf("marker_traits = %s: exit %d, warned %v\n%s\n%s", markers, code, warned, out.String(), errb.String())
		}
	}
}

// A node nova writes without this engine's marker although the engine
// manages it (enrolled after a uuid-listed nova-config): validate names
// the stale provider config and the restart it needs.
func TestValidateNamesStaleProviderConfig(t *testing.T) {
	fake := placementfake.New()
	t.Cleanup(fake.Close)
	placementTOML := fmt.Sprintf("[placement]\nendpoint = %q\ntoken = \"admin\"\n", fake.URL())
	path := daemonConfig(t, t.TempDir(), placementTOML, "[nova]\nbeside = true\n")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"once", "--config", path}, &out, &errb); code != 0 {
		t.Fatalf("once: exit %d\n%s", code, errb.String())
	}
	u := fake.ProviderUUIDs()[0]
	for _, tr := range []string{"COMPUTE_NODE", "COMPUTE_NET_ATTACH_INTERFACE"} {
		if err := fake.AddTrait(u, tr); err != nil {
			t.Fatal(err)
		}
	}
	if err := fake.RemoveTrait(u, "CUSTOM_RPENGINE_OWNER_DAEMON"); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	code := run(context.Background(), []string{"validate", "--config", path}, &out, &errb)
	if code == 0 || !strings.Contains(errb.String(), "nova's provider config is stale") || !strings.Contains(errb.String(), "restart nova-compute") {
		t.Fatalf("validate: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
}
