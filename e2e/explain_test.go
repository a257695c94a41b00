package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// explainJSON is the part of `engine explain -o json` the test reads.
type explainJSON struct {
	Node string
	Why  struct {
		Verdict, Decides string
		Conditions       []string
	}
	Placement *struct {
		Inventories map[string]inventory
		Traits      []string
		Allocations []struct {
			Consumer  string
			Type      string `json:"consumer_type"`
			Resources map[string]int64
		}
	}
}

func explain(t *testing.T, cfg, node string) explainJSON {
	t.Helper()
	res := runEngine(t, "explain", node, "--config", cfg, "-o", "json")
	var x explainJSON
	if err := json.Unmarshal([]byte(res.stdout), &x); err != nil || res.code != 0 {
		t.Fatalf("explain %s: exit %d, %v\n%s\n%s", node, res.code, err, res.stdout, res.stderr)
	}
	return x
}

// `engine explain` answers with values against the real Placement: the
// rule and the source's value that triggered it, an instance as an
// instance, and the allocations with their consumer types.
func TestExplainAgainstRealPlacement(t *testing.T) {
	url := placementtest.Shared(t)
	plugin := plugintest.Build(t, "plugins/fake")
	u := func(i int) string { return uuidFor(t.Name(), i) }
	nodes := []worldNode{
		{uuid: u(0), rc: "gold", power: "power off", provision: "available"},
		{uuid: u(1), rc: "gold", power: "power off", provision: "cleaning"},
		{uuid: u(2), rc: "gold", power: "power on", provision: "active", instance: u(102)},
	}
	cfg := writeConfig(t, fmt.Sprintf("explain-%x", os.Getpid()), url, plugin, worldTOML(nodes, nil))
	once(t, cfg)
	consumer := u(100)
	code, body := placementDo(t, url, "PUT", "/allocations/"+consumer, map[string]any{
		"allocations": map[string]any{u(0): map[string]any{"resources": map[string]int{"CUSTOM_GOLD": 1}}},
		"project_id":  "p", "user_id": "u", "consumer_generation": nil, "consumer_type": "INSTANCE"})
	if code != 204 {
		t.Fatalf("allocation: %d %s", code, body)
	}

	x := explain(t, cfg, u(1))
	if x.Why.Verdict != "not schedulable: provision_state = cleaning (not available)" || x.Why.Decides != "provision_state" {
		t.Errorf("cleaning node: %+v", x.Why)
	}
	if x.Placement == nil || x.Placement.Inventories["CUSTOM_GOLD"].Reserved != 1 {
		t.Errorf("cleaning node's provider: %+v", x.Placement)
	}
	if x := explain(t, cfg, u(2)); x.Why.Verdict != "not schedulable: in use by instance "+u(102) {
		t.Errorf("node with an instance: %+v", x.Why)
	}
	x = explain(t, cfg, u(0))
	if x.Why.Verdict != "schedulable" || x.Placement == nil || len(x.Placement.Allocations) != 1 ||
		x.Placement.Allocations[0].Consumer != consumer || x.Placement.Allocations[0].Type != "INSTANCE" {
		t.Errorf("allocated node: %+v %+v", x.Why, x.Placement)
	}
	res := runEngine(t, "explain", u(1), "--config", cfg)
	t.Logf("engine explain %s:\n%s", u(1), res.stdout)
	if res.code != 0 || !strings.Contains(res.stdout, "provision_state = cleaning") || !strings.Contains(res.stdout, "CUSTOM_GOLD") {
		t.Errorf("text: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	for _, verb := range []string{"plan", "show"} {
		res := runEngine(t, verb, "--node", "no-such-node", "--config", cfg)
		if res.code != 1 || res.stdout != "" || !strings.Contains(res.stderr, `node "no-such-node"`) {
			t.Errorf("%s --node of an unknown node: exit %d, stdout %q, stderr %q", verb, res.code, res.stdout, res.stderr)
		}
	}
	res = runEngine(t, "explain", "no-such-node", "--config", cfg)
	if res.code != 1 || res.stdout != "" || !strings.Contains(res.stderr, `node "no-such-node"`) {
		t.Errorf("unknown node: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
}
