package main

import (
	"bytes"
	"context"
	"fmt"
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
	verb("resume", node)
	d.waitFor("the rules again", func() bool { p, _ := fake.Provider(node); return p.Inventories[class].Reserved == 0 })
}
