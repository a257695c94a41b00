package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// once --node writes only the named nodes' providers (a comma list and a
// repeated flag, by name and by uuid); an unknown node is exit 1 with
// the error on stderr and writes nothing; a full once does the rest.
func TestOnceNodeWritesOnlyThoseNodes(t *testing.T) {
	fake := placementfake.New()
	t.Cleanup(fake.Close)
	path := daemonConfig(t, t.TempDir(), fmt.Sprintf("[placement]\nendpoint = %q\ntoken = \"admin\"\n", fake.URL()), "")
	once := func(args ...string) (int, engine.Report, string) {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"once", "--config", path, "--json"}, args...), &out, &errb)
		var r engine.Report
		if code != 2 && out.Len() > 0 {
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatalf("once %v: %v\n%s", args, err, out.String())
			}
		}
		return code, r, errb.String()
	}
	code, r, stderr := once("--node", "node-00001,node-00002", "--node", "node-00007")
	if code != 0 || r.Created != 3 || r.Nodes != 3 || len(fake.ProviderUUIDs()) != 3 {
		t.Fatalf("exit %d, created %d of %d nodes, %d providers; want 0, 3 of 3, 3\n%s", code, r.Created, r.Nodes, len(fake.ProviderUUIDs()), stderr)
	}
	uuid := fake.ProviderUUIDs()[0]
	before := len(fake.Requests())
	code, _, stderr = once("--node", "node-00003", "--node", "nosuch")
	if code != 1 || !strings.Contains(stderr, `engine once: node "nosuch": the plugin lists no such node`) {
		t.Fatalf("unknown node: exit %d, stderr %q; want 1 and the node named", code, stderr)
	}
	for _, req := range fake.Requests()[before:] {
		if req.Method != "GET" {
			t.Errorf("an unknown node asked, yet once sent %s %s", req.Method, req.Path)
		}
	}
	code, r, stderr = once("--node", strings.ToUpper(uuid))
	if code != 0 || r.Nodes != 1 || r.Unchanged != 1 || r.Created+r.Updated != 0 {
		t.Fatalf("by uuid: exit %d, nodes %d, unchanged %d; want 0, 1, 1\n%s", code, r.Nodes, r.Unchanged, stderr)
	}
	code, r, stderr = once()
	if code != 0 || r.Created != 9 || r.Unchanged != 3 {
		t.Fatalf("full once: exit %d, created %d, unchanged %d; want 0, 9, 3\n%s", code, r.Created, r.Unchanged, stderr)
	}
}
