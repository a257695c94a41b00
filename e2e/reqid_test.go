package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// logRecord is one line of the engine's --log-format json.
type logRecord struct {
	Msg       string `json:"msg"`
	Level     string `json:"level"`
	Op        string `json:"op"`
	Node      string `json:"node"`
	RequestID string `json:"request_id"`
	GlobalID  string `json:"global_request_id"`
}

func logRecords(t *testing.T, stderr string) []logRecord {
	t.Helper()
	var out []logRecord
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var r logRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("not a JSON log line: %q", line)
		}
		out = append(out, r)
	}
	return out
}

// placementLog reads the real Placement's requestlog lines: oslo.log's
// context format puts "[global_request_id request_id user project ...]"
// before `"METHOD /path" status: N`.
var placementLine = regexp.MustCompile(`placement\.requestlog \[(\S+) (req-\S+) [^\]]*\] \S+ "(\w+) (\S+)" status: (\d+)`)

type placementRequest struct{ global, id, method, path, status string }

func placementLog(t *testing.T, path string) map[string]placementRequest {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byID := map[string]placementRequest{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := placementLine.FindStringSubmatch(sc.Text()); m != nil {
			byID[m[2]] = placementRequest{m[1], m[2], m[3], m[4], m[5]}
		}
	}
	return byID
}

// onceLogged runs `engine once` with JSON logs and returns its report,
// exit code, log records and the cycle's global request id.
func onceLogged(t *testing.T, cfg string) (report, int, []logRecord, string) {
	t.Helper()
	res := runEngine(t, "once", "--config", cfg, "--json", "--log-format", "json")
	var rep report
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		t.Fatalf("once: exit %d, %v\n%s", res.code, err, res.stderr)
	}
	recs := logRecords(t, res.stderr)
	global := ""
	for _, r := range recs {
		if r.Msg == "cycle started" {
			global = r.GlobalID
		}
	}
	if !regexp.MustCompile(`^req-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(global) {
		t.Fatalf("no global request id req-<uuid> on 'cycle started':\n%s", res.stderr)
	}
	return rep, res.code, recs, global
}

// The engine's log and the real Placement's join: each write's record
// names Placement's request id and the cycle's global id, and
// Placement's own log has that very request under that global id (it
// accepted the engine's X-OpenStack-Request-ID). A write Placement
// refuses (the delete of a provider with a child) names both ids too.
func TestPlacementLogShowsTheGlobalRequestID(t *testing.T) {
	url, plog := placementtest.StartRealLogged(t)
	plugin := plugintest.Build(t, "plugins/fake")
	u := func(i int) string { return uuidFor(t.Name(), i) }
	var nodes []worldNode
	for i := range 3 {
		nodes = append(nodes, worldNode{uuid: u(i), rc: "gold", power: "power off", provision: "available"})
	}
	id := fmt.Sprintf("reqid-%x", os.Getpid())
	cfg := writeConfig(t, id, url, plugin, worldTOML(nodes, nil))
	rep, code, recs, global := onceLogged(t, cfg)
	if code != 0 || len(rep.Errors) > 0 {
		t.Fatalf("first once: exit %d, %v", code, rep.Errors)
	}
	seen := placementLog(t, plog)
	writes := 0
	for _, r := range recs {
		if r.Msg != "provider written" {
			continue
		}
		writes++
		p, ok := seen[r.RequestID]
		want := "PUT /resource_providers/" + r.Node + "/"
		if r.Op == "create_provider" {
			want = "POST /resource_providers"
		}
		if r.GlobalID != global || !ok || p.global != global || !strings.HasPrefix(p.method+" "+p.path, want) {
			t.Errorf("write %+v: Placement's log has %+v (global %s)", r, p, global)
		}
	}
	if writes < 3*3 { // create, inventory, traits for each node
		t.Fatalf("%d writes logged", writes)
	}
	n := 0
	for _, p := range seen {
		if p.global == global {
			n++
		}
	}
	t.Logf("%d writes logged; Placement logged %d requests under %s", writes, n, global)

	// Node 1 is deleted at the source, and its provider has a child:
	// Placement refuses the delete at the second proof.
	plant(t, url, "POST", "/resource_providers", map[string]any{"uuid": u(9), "name": "child-" + u(9), "parent_provider_uuid": u(1)})
	cfg2 := writeConfig(t, id, url, plugin, worldTOML([]worldNode{nodes[0], nodes[2]}, nil))
	copyState(t, cfg, cfg2)
	cfg = cfg2
	onceLogged(t, cfg) // the first proof
	rep, code, _, global = onceLogged(t, cfg)
	if code != 1 || len(rep.Errors) != 1 {
		t.Fatalf("second proof: exit %d, errors %v", code, rep.Errors)
	}
	msg := rep.Errors[0].Message
	m := regexp.MustCompile(`\[request (req-\S+), global (req-\S+)\]`).FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("error %q names no request ids", msg)
	}
	t.Logf("refused write: %s", msg)
	seen = placementLog(t, plog)
	if p := seen[m[1]]; m[2] != global || p.global != global || p.method != "DELETE" || p.path != "/resource_providers/"+u(1) || p.status != "409" {
		t.Errorf("error %q: Placement's log has %+v (global %s)", msg, p, global)
	}
}
