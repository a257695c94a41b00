package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// engine pause and resume against the running daemon: a request without
// the API key's proof is refused; a paused node keeps an operator's
// change for three cycles and is reported; resume restores the rules at
// the next cycle.
func TestPauseThroughTheDaemon(t *testing.T) {
	fake := placementfake.New()
	defer fake.Close()
	cfg := daemonConfig(t, t.TempDir(), fmt.Sprintf("[placement]\nendpoint = %q\ntoken = \"admin\"\n", fake.URL()), "")
	d := startDaemon(t, cfg)
	d.waitFor("the providers", func() bool { return len(fake.ProviderUUIDs()) == 12 })
	b, _ := os.ReadFile(cfg) // the verbs reach the daemon where it listens
	os.WriteFile(cfg, []byte(strings.Replace(string(b), `listen = "127.0.0.1:0"`, `listen = "`+d.addr+`"`, 1)), 0o644)
	var node, class string
	for _, u := range fake.ProviderUUIDs() {
		p, _ := fake.Provider(u)
		for c, inv := range p.Inventories {
			if node == "" && inv.Reserved == 0 {
				node, class = u, c
			}
		}
	}
	resp, err := http.Post("http://"+d.addr+"/api/v1/pause/"+node+"?until=2099-01-01T00:00:00Z", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a pause without the key's proof: %s, want 403", resp.Status)
	}
	verb := func(argv ...string) string {
		var out bytes.Buffer
		if code := run(context.Background(), append(argv, "--config", cfg), &out, &out); code != 0 {
			t.Fatalf("%v: exit %d: %s", argv, code, out.String())
		}
		return out.String()
	}
	if out := verb("pause", node, "--for", "2h", "--reason", "ratio raised by hand"); !strings.Contains(out, "paused until") {
		t.Fatalf("pause said %q", out)
	}
	if err := fake.SetReserved(node, class, 1); err != nil {
		t.Fatal(err)
	}
	start := d.metric(`rpengine_cycles_total{outcome="ok"}`)
	d.waitFor("three cycles", func() bool { return d.metric(`rpengine_cycles_total{outcome="ok"}`) >= start+3 })
	if p, _ := fake.Provider(node); p.Inventories[class].Reserved != 1 {
		t.Fatalf("paused node: reserved %d after three cycles; the operator's change was to stay", p.Inventories[class].Reserved)
	}
	if d.metric("rpengine_paused_nodes") != 1 || d.metric("rpengine_pauses_overdue") != 0 {
		t.Fatalf("metrics: paused %v overdue %v", d.metric("rpengine_paused_nodes"), d.metric("rpengine_pauses_overdue"))
	}
	pauseShown(t, d, cfg, node, "ratio raised by hand")
	verb("resume", node)
	d.waitFor("the rules again", func() bool { p, _ := fake.Provider(node); return p.Inventories[class].Reserved == 0 })
	// By name: the daemon finds the one node of that name in the listing.
	var plan struct {
		Outcomes []struct{ Node, Name string }
	}
	var planOut bytes.Buffer
	run(context.Background(), []string{"plan", "--json", "--config", cfg}, &planOut, io.Discard)
	if err := json.Unmarshal(planOut.Bytes(), &plan); err != nil {
		t.Fatalf("plan --json: %v: %s", err, planOut.String())
	}
	name := ""
	for _, o := range plan.Outcomes {
		if o.Node == node {
			name = o.Name
		}
	}
	if name == "" || name == node {
		t.Fatalf("node %s has no name of its own in the plan (%q)", node, name)
	}
	if out := verb("pause", name, "--for", "1h"); !strings.Contains(out, name+" paused until") {
		t.Fatalf("pause %s (%s's name) said %q", name, node, out)
	}
	if err := fake.SetReserved(node, class, 1); err != nil {
		t.Fatal(err)
	}
	start = d.metric(`rpengine_cycles_total{outcome="ok"}`)
	d.waitFor("three cycles", func() bool { return d.metric(`rpengine_cycles_total{outcome="ok"}`) >= start+3 })
	if p, _ := fake.Provider(node); p.Inventories[class].Reserved != 1 || d.metric("rpengine_paused_nodes") != 1 {
		t.Fatalf("paused by name: reserved %d, paused %v; want the operator's 1 kept, 1 paused", p.Inventories[class].Reserved, d.metric("rpengine_paused_nodes"))
	}
	if out := verb("resume", name); !strings.Contains(out, name+" resumed") {
		t.Fatalf("resume %s said %q", name, out)
	}
	d.waitFor("the rules again", func() bool { p, _ := fake.Provider(node); return p.Inventories[class].Reserved == 0 })
	var out bytes.Buffer
	if code := run(context.Background(), []string{"pause", "no-such-node", "--config", cfg}, &out, &out); code == 0 || !strings.Contains(out.String(), `no node named "no-such-node"`) {
		t.Fatalf("pause of an unknown name: exit %d, %q", code, out.String())
	}
}
