package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// planReport is what `engine plan --json` and `engine once --json` both
// print: the outcomes node by node.
type planReport struct {
	Failed   int
	Outcomes []engine.Outcome
	Errors   []engine.Error
}

func runJSON(t *testing.T, verb, cfg string) (planReport, result) {
	t.Helper()
	res := runEngine(t, verb, "--json", "--config", cfg)
	var r planReport
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatalf("engine %s: exit %d, stdout %q, stderr %s", verb, res.code, res.stdout, res.stderr)
	}
	return r, res
}

// byNode is each outcome as "kind reason: changes", by node, for comparing
// a plan with the cycle that follows it.
func byNode(r planReport) map[string]string {
	out := map[string]string{}
	for _, o := range r.Outcomes {
		var ch []string
		for _, c := range o.Changes {
			ch = append(ch, fmt.Sprintf("%s %s %s→%s +%v -%v", c.Field, c.Class, c.From, c.To, c.Added, c.Removed))
		}
		slices.Sort(ch)
		out[o.Node] = fmt.Sprintf("%s %s: %s %s", o.Kind, o.Reason, strings.Join(ch, "; "), o.Message)
	}
	return out
}

// ownedByOther creates uuid's provider in Placement carrying another
// engine's owner marker.
func ownedByOther(t *testing.T, url, uuid, owner string) {
	t.Helper()
	if code, b := placementDo(t, url, "POST", "/resource_providers", map[string]string{"uuid": uuid, "name": uuid}); code != 200 {
		t.Fatalf("create provider: %d %s", code, b)
	}
	if code, b := placementDo(t, url, "PUT", "/traits/"+owner, nil); code != 201 && code != 204 {
		t.Fatalf("create trait: %d %s", code, b)
	}
	if code, b := placementDo(t, url, "PUT", "/resource_providers/"+uuid+"/traits",
		map[string]any{"resource_provider_generation": 0, "traits": []string{owner}}); code != 200 {
		t.Fatalf("mark provider: %d %s", code, b)
	}
}

// `engine plan` answers while `engine run` holds the state file (it reads
// the last saved version, without the lock), and it predicts the next
// `engine once` exactly on a real Placement, a provider another engine
// owns included: the same failure, not a create.
func TestPlanBesideRunPredictsOnce(t *testing.T) {
	url := placementtest.Shared(t)
	plugin := plugintest.Build(t, "plugins/fake")
	u := func(i int) string { return uuidFor(t.Name(), i) }
	other := fmt.Sprintf("CUSTOM_RPENGINE_OWNER_OTHER_%X", os.Getpid())
	ownedByOther(t, url, u(2), other)
	nodes := []worldNode{
		{uuid: u(0), rc: "gold", power: "power off", provision: "available"},
		{uuid: u(1), rc: "gold", power: "power off", provision: "available"},
		{uuid: u(2), rc: "gold", power: "power off", provision: "available"},
	}
	id := fmt.Sprintf("plan-%x", os.Getpid())
	cfg := writeConfig(t, id, url, plugin, worldTOML(nodes, nil))
	dir := filepath.Dir(cfg)

	cmd, logs := startDaemon(t, cfg)
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := os.Stat(filepath.Join(dir, "state.json"))
		if _, ok := readProvider(t, url, u(1)); ok && err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no first cycle of engine run:\n%s", tail(logs.String(), 3000))
		}
		time.Sleep(50 * time.Millisecond)
	}

	// The world changes under a second config on the same state file: node
	// 1 goes into maintenance. The daemon, holding the state, goes on.
	nodes[1].maintenance = true
	changed := filepath.Join(dir, "changed.toml")
	b, _ := os.ReadFile(cfg)
	text := strings.Replace(string(b), "[plugin.config]", "", 1)
	text = text[:strings.Index(text, "[[plugin.config.node]]")] + worldTOML(nodes, nil)
	if err := os.WriteFile(changed, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, res := runJSON(t, "plan", changed)
	if strings.Contains(res.stderr, "state file unusable") || res.code != 1 {
		t.Fatalf("plan beside engine run: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	want := byNode(plan)
	if !strings.HasPrefix(want[u(1)], string(engine.KindUpdated)) || !strings.Contains(want[u(2)], "owned by "+other) ||
		plan.Failed != 1 {
		t.Fatalf("plan beside engine run: failed %d, %v", plan.Failed, want)
	}
	text2 := runEngine(t, "plan", "--config", changed)
	if !strings.Contains(text2.stdout, "owned by "+other) || strings.Contains(text2.stdout, "+ create") {
		t.Errorf("plan's text:\n%s", text2.stdout)
	}

	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	plan, _ = runJSON(t, "plan", changed) // now from the file the daemon left
	once, res := runJSON(t, "once", changed)
	if res.code != 1 {
		t.Fatalf("once: exit %d\n%s", res.code, res.stderr)
	}
	if got, want := byNode(once), byNode(plan); !maps.Equal(got, want) || plan.Failed != once.Failed {
		t.Errorf("once did %v (failed %d)\nplan said %v (failed %d)", got, once.Failed, want, plan.Failed)
	}
}
