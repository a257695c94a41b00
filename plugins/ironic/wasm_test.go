package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"slices"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
	"github.com/rpengine/rpengine/internal/wasmhost"
	"github.com/rpengine/rpengine/plugins/ironic/internal/fakeironic"
)

// loadWasm loads the built plugin with baremetal granted at url.
func loadWasm(tb testing.TB, url string, cfg map[string]any) *wasmhost.Plugin {
	tb.Helper()
	raw, _ := json.Marshal(cfg)
	p, err := wasmhost.Load(context.Background(), plugintest.Build(tb, "plugins/ironic"), raw, wasmhost.Options{
		CacheDir: plugintest.CacheDir(),
		Services: map[string]string{"baremetal": url},
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Close(context.Background()) })
	return p
}

// The Wasm build does what the native one does: the same nodes, the same
// refusals, the deletion proof, through the host's HTTP and JSON decoding.
func TestWasmPluginListsAndConfirms(t *testing.T) {
	nodes := fakeironic.Generate(2500, 11)
	fake := fakeironic.New(nodes, 82)
	srv := httptest.NewServer(fake)
	defer srv.Close()
	p := loadWasm(t, srv.URL, map[string]any{"page_size": 1000})
	if !p.Supports(hostabi.ExportConfirmDeleted) {
		t.Fatal("confirm_deleted not advertised")
	}
	ctx := context.Background()
	got, err := p.ListNodes(ctx, hostabi.ListNodesRequest{Shards: []string{"shard-2", "shard-5"}})
	if err != nil {
		t.Fatal(err)
	}
	var want []hostabi.Node
	for _, n := range nodes {
		if n.Shard == "shard-2" || n.Shard == "shard-5" {
			want = append(want, hostabi.Node{UUID: n.UUID, Name: n.Name, ResourceClass: n.ResourceClass,
				ProvisionState: n.ProvisionState, TargetProvisionState: n.TargetProvisionState,
				PowerState: n.PowerState, Maintenance: n.Maintenance, InstanceUUID: n.InstanceUUID,
				Shard: n.Shard, Traits: n.Traits})
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %d nodes, want %d; first %+v vs %+v", len(got), len(want), got[0], want[0])
	}

	gone := "0d6f3c52-8f5a-4b0e-9b1a-000000000001"
	deleted, present, err := p.ConfirmDeleted(ctx, []string{nodes[0].UUID, gone})
	if err != nil || !slices.Equal(deleted, []string{gone}) || !slices.Equal(present, []string{nodes[0].UUID}) {
		t.Fatalf("deleted %v present %v err %v", deleted, present, err)
	}
	inst, err := p.ListInstances(ctx)
	if err != nil || len(inst) != 0 {
		t.Fatalf("instances %v, %v; want none without compute_host", inst, err)
	}
}
