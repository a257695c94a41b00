package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// A password in placement.endpoint is never shown: not on the status
// page, in the logs, in a cycle's errors, in the metrics or in the state
// file (whose key names the endpoint).
func TestEndpointPasswordIsNeverShown(t *testing.T) {
	fake := placementfake.New()
	defer fake.Close()
	dir := t.TempDir()
	const secret = "Sup3rSecretPw"
	endpoint := strings.Replace(fake.URL(), "http://", "http://admin:"+secret+"@", 1)
	cfg := daemonConfig(t, dir, fmt.Sprintf("[placement]\nendpoint = %q\ntoken = \"admin\"\n", endpoint), "")
	// One listing refused with 400: its error quotes the URL in the report.
	fake.Inject(placementfake.Fault{Method: "GET", Path: "/resource_providers", Status: 400, Times: 1})
	d := startDaemon(t, cfg)
	d.waitFor("a failed and a clean cycle", func() bool {
		return d.metric(`rpengine_cycles_total{outcome="ok"}`) >= 1 && d.metric(`rpengine_cycles_total{outcome="failed"}`) >= 1
	})
	_, page := d.get("/")
	_, metrics := d.get("/metrics")
	if code := d.stop(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	state, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"page": page, "metrics": metrics, "logs": d.logs.String(), "state file": string(state)} {
		if strings.Contains(text, secret) {
			t.Errorf("the %s shows the password", what)
		}
	}
	if !strings.Contains(page, "admin:xxxxx@") || !strings.Contains(string(state), `"key":"`+fake.URL()+` daemon"`) {
		t.Errorf("the page should name the endpoint redacted, the state key without its userinfo:\n%s", string(state)[:min(len(state), 200)])
	}
	if !strings.Contains(d.logs.String(), "400") {
		t.Errorf("the failed cycle is not in the logs")
	}
}
