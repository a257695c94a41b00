package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// cycleReport is the part of the daemon's GET /api/v1/report read here.
type cycleReport struct {
	Cycles  int
	Running bool
	Report  *struct {
		PlacementRequests int64 `json:"placement_requests"`
		Nova              *engine.NovaReport
	}
}

// swapHold deletes node's hold as an operator would (DELETE, which leaves
// the provider's generation as it was on the real Placement) and plants
// consumer, an allocation of the hold project's class, on other: the hold
// project's usage total is unchanged.
func swapHold(t *testing.T, url, owner, hold, node, other, consumer string) {
	t.Helper()
	before := generation(t, url, node)
	plant(t, url, "DELETE", "/allocations/"+engine.HoldConsumer(owner, node), nil)
	if g := generation(t, url, node); g != before {
		t.Fatalf("DELETE of the hold moved %s's generation %d -> %d", node, before, g)
	}
	plant(t, url, "PUT", "/allocations/"+consumer, map[string]any{
		"allocations": map[string]any{other: map[string]any{"resources": map[string]int{"CUSTOM_GOLD": 1}}},
		"project_id":  hold, "user_id": hold, "consumer_generation": nil, "consumer_type": "INSTANCE"})
	var us struct{ Usages map[string]map[string]int }
	placementGet(t, url, "/usages?project_id="+hold+"&user_id="+hold, &us)
	if n := us.Usages[engine.HoldConsumerType]["CUSTOM_GOLD"] + us.Usages["INSTANCE"]["CUSTOM_GOLD"]; n != 2 {
		t.Fatalf("hold project's usage after the swap: %v; want 2 in all", us.Usages)
	}
}

func holdOn(t *testing.T, url, owner, node string) bool {
	t.Helper()
	var a struct{ Allocations map[string]any }
	placementGet(t, url, "/allocations/"+engine.HoldConsumer(owner, node), &a)
	return len(a.Allocations) > 0
}

// On Debian's Placement: a hold swapped (one deleted, another hold-project
// allocation planted) is put back by `engine once`, and by the running
// daemon's next cycle, which finds it from the planted provider's moved
// generation; idle, both send the listing and the usage only.
func TestHoldSwapIsRepairedOnRealPlacement(t *testing.T) {
	url := placementtest.Shared(t)
	plugin := plugintest.Build(t, "plugins/fake")
	u := func(i int) string { return uuidFor(t.Name(), i) }
	world := retiredWorld(u, false, true, true, false)
	addr := freeAddr(t)
	id := fmt.Sprintf("holdswap-%x", os.Getpid())
	cfg := writeConfig(t, id, url, plugin, "\n[server]\nlisten = \""+addr+"\"\n\n"+world+"\n[nova]\nbeside = true\n")
	b, _ := os.ReadFile(cfg)
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(b), `interval = "5s"`, `interval = "1h"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	owner, hold := engine.OwnerTrait(id), "rpengine-hold-"+id
	once(t, cfg)
	if !holdOn(t, url, owner, u(1)) || !holdOn(t, url, owner, u(2)) {
		t.Fatal("no holds after the first once")
	}
	once(t, cfg) // reads the held providers once after their reshape
	if r := once(t, cfg); r.PlacementRequests != 2 {
		t.Fatalf("idle engine once beside nova: %d requests, want 2", r.PlacementRequests)
	}

	swapHold(t, url, owner, hold, u(1), u(3), "c0ffee00-0000-4000-8000-000000000001")
	if once(t, cfg); !holdOn(t, url, owner, u(1)) {
		t.Fatal("engine once after the swap left node 1 without its hold")
	}
	plant(t, url, "DELETE", "/allocations/c0ffee00-0000-4000-8000-000000000001", nil)

	_, logs := startDaemon(t, cfg)
	n := waitCycles(t, addr, 1, logs).Cycles
	cycle := func() cycleReport {
		t.Helper()
		resp, err := http.Post("http://"+addr+"/api/v1/cycle", "", nil)
		if err != nil || resp.StatusCode != http.StatusAccepted {
			t.Fatalf("POST /api/v1/cycle: %v %v", err, resp)
		}
		resp.Body.Close()
		n++
		waitCycles(t, addr, n, logs)
		var r cycleReport
		if code, body := get(t, "http://"+addr+"/api/v1/report"); code != 200 || json.Unmarshal([]byte(body), &r) != nil || r.Report == nil || r.Report.Nova == nil {
			t.Fatalf("GET /api/v1/report: %d %s", code, body)
		}
		return r
	}
	for range 2 { // the reshape of node 1 is read once
		cycle()
	}
	if r := cycle(); r.Report.PlacementRequests != 2 || r.Report.Nova.Held != 2 {
		t.Fatalf("idle cycle of the daemon: %d requests, %+v; want 2", r.Report.PlacementRequests, r.Report.Nova)
	}
	swapHold(t, url, owner, hold, u(2), u(0), "c0ffee00-0000-4000-8000-000000000002")
	if r := cycle(); r.Report.Nova.Placed != 1 || !holdOn(t, url, owner, u(2)) {
		t.Fatalf("daemon cycle after the swap: %+v, hold on node 2 %v\n%s", r.Report.Nova, holdOn(t, url, owner, u(2)), tail(logs.String(), 3000))
	}
	if !strings.Contains(logs.String(), "hold missing though the hold project's usage agrees") {
		t.Errorf("no warning logged for the swap:\n%s", tail(logs.String(), 3000))
	}
	plant(t, url, "DELETE", "/allocations/c0ffee00-0000-4000-8000-000000000002", nil)
}
