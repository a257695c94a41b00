package wasmhost_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/wasmhost"
	"github.com/rpengine/rpengine/internal/plugintest"
)

func load(t *testing.T, cfg map[string]any, opts wasmhost.Options) (*wasmhost.Plugin, error) {
	t.Helper()
	raw, _ := json.Marshal(cfg)
	opts.CacheDir = plugintest.CacheDir()
	p, err := wasmhost.Load(context.Background(), plugintest.Build(t, "plugins/fake"), raw, opts)
	if p != nil {
		t.Cleanup(func() { p.Close(context.Background()) })
	}
	return p, err
}

func TestFakePluginListsGeneratedNodes(t *testing.T) {
	p, err := load(t, map[string]any{"nodes": 25, "seed": 7, "instance_fraction": 0.5}, wasmhost.Options{})
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 25 {
		t.Fatalf("got %d nodes, want 25", len(nodes))
	}
	inst, err := p.ListInstances(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	withInstance := 0
	for _, n := range nodes {
		if n.InstanceUUID != "" {
			withInstance++
		}
	}
	if len(inst) != withInstance || withInstance == 0 {
		t.Fatalf("instances %d, nodes with instance_uuid %d", len(inst), withInstance)
	}
	if p.Name() != "fake" {
		t.Fatalf("name %q", p.Name())
	}
}

func TestBadPluginConfigIsRefusedAtLoad(t *testing.T) {
	_, err := load(t, map[string]any{"nodez": 3}, wasmhost.Options{})
	if err == nil || !strings.Contains(err.Error(), `unknown field "nodez"`) {
		t.Fatalf("err = %v, want it to name the unknown key", err)
	}
}

func TestFaultsAreContainedAndTheInstanceRecovers(t *testing.T) {
	cases := []struct{ fault, want string }{
		{"error", "injected failure"},
		{"panic", "plugin panic: injected panic"},
		{"exit", "exit_code(3)"},
		{"spin", "time limit"},
		{"hog", "list_nodes"},
	}
	for _, c := range cases {
		t.Run(c.fault, func(t *testing.T) {
			opts := wasmhost.Options{CallTimeout: 2 * time.Second, MemoryLimit: 64 << 20}
			p, err := load(t, map[string]any{"nodes": 3, "fault": c.fault}, opts)
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.ListNodes(context.Background(), hostabi.ListNodesRequest{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to mention %q", err, c.want)
			}
			// The other operation still works on a fresh or intact instance.
			if _, err := p.ListInstances(context.Background()); err != nil {
				t.Fatalf("after %s: %v", c.fault, err)
			}
		})
	}
}
