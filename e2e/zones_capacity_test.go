package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/ironictest"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// The daemon's rpengine_capacity_nodes{class,state,zone} match counts
// taken from Ironic (nodes by shard, maintenance) and Placement (each
// zone aggregate's allocation candidates) directly.
func TestCapacityMatchesIronicAndPlacement(t *testing.T) {
	url := placementtest.StartReal(t)
	ironicURL := ironictest.StartReal(t)
	plugin := plugintest.Build(t, "plugins/ironic")
	c := ironictest.NewClient(t, ironicURL)
	for i := range 5 {
		u := c.Create(t, ironictest.Spec{Name: fmt.Sprintf("cap%d", i), ResourceClass: "baremetal-gold",
			Shard: []string{"rack-a", "rack-b"}[i%2]})
		c.Available(t, u)
		if i == 2 {
			c.Maintenance(t, u, true)
		}
	}
	addr := freeAddr(t)
	cfg := ironicConfig(t, fmt.Sprintf("zones-cap-%x", os.Getpid()), url, plugin, ironicURL, "", "")
	appendFile(t, cfg, zoneRules+fmt.Sprintf("\n[server]\nlisten = %q\n", addr))
	_, logs := startDaemon(t, cfg)

	want := ironicCapacity(t, ironicURL)
	var got map[string]float64
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if got = capacityMetric("http://" + addr); len(got) > 0 {
			break
		}
	}
	if len(got) == 0 {
		t.Fatalf("no rpengine_capacity_nodes series; engine log:\n%s", tailString(logs.String(), 4000))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("capacity metric %v, Ironic's count %v", got, want)
	}
	for zone, agg := range map[string]string{"az-a": zoneAggA, "az-b": zoneAggB} {
		n := len(zoneCandidates(t, url, "CUSTOM_BAREMETAL_GOLD", agg))
		if m := got["CUSTOM_BAREMETAL_GOLD/schedulable/"+zone]; float64(n) != m {
			t.Errorf("zone %s: Placement has %d candidates, the metric %v", zone, n, m)
		}
	}
}

// ironicCapacity counts Ironic's nodes as class/state/zone: the zone by
// shard (zoneRules), maintenance or schedulable (every node is available).
func ironicCapacity(t *testing.T, ironicURL string) map[string]float64 {
	t.Helper()
	req, _ := http.NewRequest("GET", ironicURL+"/v1/nodes?fields=uuid,shard,maintenance,provision_state,resource_class", nil)
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.82")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Nodes []struct {
			Maintenance bool   `json:"maintenance"`
			Shard       string `json:"shard"`
			State       string `json:"provision_state"`
			Class       string `json:"resource_class"`
		} `json:"nodes"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, n := range body.Nodes {
		if n.State != "available" || n.Class != "baremetal-gold" {
			t.Fatalf("node %+v: not what the test made", n)
		}
		state := "schedulable"
		if n.Maintenance {
			state = "maintenance"
		}
		zone := map[string]string{"rack-a": "az-a", "rack-b": "az-b"}[n.Shard]
		out["CUSTOM_BAREMETAL_GOLD/"+state+"/"+zone]++
	}
	return out
}

// capacityMetric reads rpengine_capacity_nodes as class/state/zone.
func capacityMetric(base string) map[string]float64 {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "rpengine_capacity_nodes{")
		if !ok {
			continue
		}
		labels, value, _ := strings.Cut(line, "} ")
		l := map[string]string{}
		for _, kv := range strings.Split(labels, ",") {
			k, v, _ := strings.Cut(kv, "=")
			l[k] = strings.Trim(v, `"`)
		}
		f, _ := strconv.ParseFloat(value, 64)
		out[l["class"]+"/"+l["state"]+"/"+l["zone"]] = f
	}
	return out
}
