package main

import (
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/config"
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
	if none := novaConfigText(cfg, []string{}); !strings.Contains(none, "providers:\n  []") {
		t.Errorf("empty scope:\n%s", none)
	}
}
