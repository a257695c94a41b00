package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// TestFreshOnceWithoutStateFileIsOneRequest: with no engine.state_file the
// state goes to the default place, so a second fresh `engine once` sends
// one request (the owner listing; no version discovery, no re-reads), and
// the report counts every request, discovery included.
func TestFreshOnceWithoutStateFileIsOneRequest(t *testing.T) {
	url := placementtest.Shared(t)
	plugin := plugintest.Build(t, "plugins/fake")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("STATE_DIRECTORY", "")
	u := func(i int) string { return uuidFor(t.Name(), i) }
	var nodes []worldNode
	for i := range 3 {
		nodes = append(nodes, worldNode{uuid: u(i), rc: "gold", power: "power off", provision: "available"})
	}
	cfg := writeConfig(t, fmt.Sprintf("dst-%x", os.Getpid()), url, plugin, worldTOML(nodes, nil))
	text, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, []byte(strings.Replace(string(text), "state_file = \"state.json\"\n", "", 1)), 0o644)

	first := once(t, cfg)
	// discovery, the listing, then per provider POST, traits, inventory,
	// plus the trait and class creations.
	if first.Created != 3 || first.PlacementRequests < 1+1+3*3 {
		t.Fatalf("first run: %+v", first)
	}
	files, _ := filepath.Glob(filepath.Join(os.Getenv("XDG_STATE_HOME"), "rpengine", "*.json"))
	if len(files) != 1 {
		t.Fatalf("default state files: %v", files)
	}
	if r := once(t, cfg); r.PlacementRequests != 1 || r.Unchanged != 3 {
		t.Fatalf("second fresh run: %+v", r)
	}
}
