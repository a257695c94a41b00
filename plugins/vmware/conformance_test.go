package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/conformance"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
	"github.com/rpengine/rpengine/internal/testing/vcsimtest"
	"github.com/rpengine/rpengine/internal/vcsession"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// The VMware plugin passes the suite `engine plugin test` runs, against
// vcsim with the vCenter granted through a session the host holds; the
// services check counts the requests the session authenticated.
func TestVMwarePassesTheConformanceSuite(t *testing.T) {
	sim := vcsimtest.Start(t, vcsimtest.Model{Clusters: 3, Hosts: 4, Datastores: 2})
	sess, err := vcsession.New(sim.URL, vcsimtest.User, vcsimtest.Password, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(context.Background())
	raw, _ := json.Marshal(testConfig)
	var lines []string
	failed := false
	ok := conformance.Run(context.Background(), conformance.Options{
		Path:   plugintest.Build(t, "plugins/vmware"),
		Config: raw,
		Host: wasmhost.Options{CacheDir: plugintest.CacheDir(), Services: map[string]string{"vcenter": sim.URL},
			Credentials: map[string]wasmhost.Credential{"vcenter": sess}},
	}, func(r conformance.Result) {
		lines = append(lines, string(r.Status)+" "+r.Check+" "+r.Detail)
		failed = failed || r.Status == conformance.Fail
	})
	out := strings.Join(lines, "\n")
	if !ok || failed {
		t.Fatalf("the VMware plugin does not pass:\n%s", out)
	}
	for _, want := range []string{"PASS describe vmware 1.0.0", "services [vcenter]", "PASS list_nodes 3 nodes, complete",
		"PASS services declared [vcenter], granted [vcenter], used [vcenter ("} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
