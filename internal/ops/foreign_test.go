package ops_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// Another writer resetting a reserved value is counted, on /metrics and
// on the status page, so a fight with nova-compute is visible.
func TestForeignRewritesShown(t *testing.T) {
	r := newRig(t, 3)
	r.src.set(func(s *source) { s.nodes[0].Retired = true })
	r.cycle()
	if err := r.fake.SetReserved(nodeUUID(0), "CUSTOM_BAREMETAL_GOLD", 0); err != nil {
		t.Fatal(err)
	}
	if rep := r.cycle(); rep.ForeignRewrites != 1 {
		t.Fatalf("foreign rewrites %d, want 1", rep.ForeignRewrites)
	}
	want := "# TYPE rpengine_foreign_rewrites_total counter\nrpengine_foreign_rewrites_total 1\n"
	if err := testutil.GatherAndCompare(r.ops.Metrics.Registry(), strings.NewReader(
		"# HELP rpengine_foreign_rewrites_total Providers whose values another writer (e.g. nova-compute) changed and the engine wrote back: a fight.\n"+want),
		"rpengine_foreign_rewrites_total"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r.ops.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `id="foreign" data-count="1"`) {
		t.Fatalf("status page has no foreign-rewrite line:\n%s", b)
	}
}
