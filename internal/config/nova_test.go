package config

import (
	"strings"
	"testing"
)

func TestNovaSection(t *testing.T) {
	cases := []struct {
		name, toml, wantErr string
	}{
		{"off by default", "", ""},
		{"beside with COMPUTE_NODE", "[provider]\nmarker_traits = [\"COMPUTE_NODE\", \"CUSTOM_X\"]\n[nova]\nbeside = true\n", ""},
		{"standard marker beside nova", "[provider]\nmarker_traits = [\"HW_CPU_X86_AVX2\"]\n[nova]\nbeside = true\n",
			"provider.marker_traits: HW_CPU_X86_AVX2 cannot be kept beside nova"},
		{"standard marker alone is fine", "[provider]\nmarker_traits = [\"HW_CPU_X86_AVX2\"]\n", ""},
		{"unknown key", "[nova]\nbesides = true\n", "unknown key(s): nova.besides"},
		{"long project", "[nova]\nbeside = true\nhold_project_id = \"" + strings.Repeat("p", 256) + "\"\n",
			"nova.hold_project_id: longer than"},
	}
	for _, c := range cases {
		_, err := Parse(good+c.toml, dirWithPlugin(t))
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.wantErr)
		}
	}
	c, err := Parse(good+"[nova]\nbeside = true\n", dirWithPlugin(t))
	if err != nil {
		t.Fatal(err)
	}
	if p, u := c.HoldIDs(); p != "rpengine-hold-e1" || u != "rpengine-hold-e1" {
		t.Errorf("default hold ids %q %q", p, u)
	}
}
