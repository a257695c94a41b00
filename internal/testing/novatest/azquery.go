package novatest

import (
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/testenv"
)

// AZQuery returns the GET /allocation_candidates querystring nova 26.2.2's
// scheduler builds for a boot in zone with one CUSTOM_BAREMETAL_GOLD,
// after creating aggregates (those uuids, availability_zone = zone) in a
// nova database under dir: nova's own map_az_to_placement_aggregate and
// resources_from_request_spec (scripts/nova/az_query.py). Skips as Start
// does when nova is not installed.
func AZQuery(t testing.TB, dir, zone string, aggregates ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: not running nova")
	}
	requireInstalled(t)
	script, err := testenv.RepoFile("scripts/nova/az_query.py")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, append([]string{script, dir, zone}, aggregates...)...)
	cmd.Env = testenv.PythonEnv()
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("az_query.py %s: %v: %s", zone, err, stderr)
	}
	var a struct{ Query string }
	if err := json.Unmarshal(out, &a); err != nil || a.Query == "" {
		t.Fatalf("az_query.py %s: %q: %v", zone, out, err)
	}
	return a.Query
}
