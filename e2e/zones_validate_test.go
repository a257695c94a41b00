package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/ironictest"
	"github.com/rpengine/rpengine/internal/testing/novatest"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// `engine validate` against nova 26.2.2's own API: of three rules, the
// one whose aggregate nova has with the rule's zone passes, and it names
// the aggregate nova has without a zone and the one nova does not have,
// exiting non-zero. The aggregates are created through nova's API.
func TestValidateZonesAgainstNova(t *testing.T) {
	url := placementtest.StartReal(t)
	ironicURL := ironictest.StartReal(t)
	novaURL := novatest.StartAPI(t, t.TempDir())
	zoned := novaAggregate(t, novaURL, "rack-a", "az-a")
	bare := novaAggregate(t, novaURL, "rack-b", "")
	const missing = "c0c0c0c0-0000-4000-8000-00000000000c"
	extra := fmt.Sprintf("\n[plugin.services]\nbaremetal = %q\ncompute = %q\n", ironicURL, novaURL)
	for i, agg := range []string{zoned, bare, missing} {
		extra += fmt.Sprintf("\n[[provider.aggregate_rules]]\nzone = %q\nshard = \"rack-%c\"\naggregates = [%q]\n",
			[]string{"az-a", "az-b", "az-c"}[i], 'a'+i, agg)
	}
	cfg := writeConfig(t, fmt.Sprintf("zones-validate-%x", os.Getpid()), url, plugintest.Build(t, "plugins/ironic"), extra)
	res := runEngine(t, "validate", "--config", cfg)
	out := res.stdout + res.stderr
	for _, want := range []string{
		"provider.aggregate_rules[0]: aggregate " + zoned + " is nova's rack-a, zone az-a",
		"provider.aggregate_rules[1]: nova aggregate " + bare + " (rack-b) has no availability_zone",
		"provider.aggregate_rules[2]: aggregate " + missing + " is not a nova aggregate",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("validate does not say %q:\n%s", want, out)
		}
	}
	if res.code == 0 {
		t.Errorf("validate exit 0 with two problems:\n%s", out)
	}
}

// novaAggregate creates an aggregate through nova's API (zone "" for
// none) and returns its uuid.
func novaAggregate(t *testing.T, novaURL, name, zone string) string {
	t.Helper()
	agg := map[string]any{"name": name}
	if zone != "" {
		agg["availability_zone"] = zone
	}
	body, _ := json.Marshal(map[string]any{"aggregate": agg})
	req, _ := http.NewRequest("POST", novaURL+"/os-aggregates", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenStack-Nova-API-Version", "2.41")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Aggregate struct{ UUID string } }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 || out.Aggregate.UUID == "" {
		t.Fatalf("create nova aggregate %s: %d, %v", name, resp.StatusCode, err)
	}
	return out.Aggregate.UUID
}
