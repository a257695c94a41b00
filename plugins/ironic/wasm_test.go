package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
	"github.com/rpengine/rpengine/internal/wasmhost"
	"github.com/rpengine/rpengine/plugins/ironic/internal/fakeironic"
)

// loadWasm loads the built plugin with baremetal granted at url.
func loadWasm(tb testing.TB, url string, cfg map[string]any) *wasmhost.Plugin {
	tb.Helper()
	return loadWasmWith(tb, url, cfg, wasmhost.Options{})
}

func loadWasmWith(tb testing.TB, url string, cfg map[string]any, opts wasmhost.Options) *wasmhost.Plugin {
	tb.Helper()
	raw, _ := json.Marshal(cfg)
	opts.CacheDir, opts.Services = plugintest.CacheDir(), map[string]string{"baremetal": url}
	p, err := wasmhost.Load(context.Background(), plugintest.Build(tb, "plugins/ironic"), raw, opts)
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

// Pages projected by the host (this host) or sent raw and projected by
// the plugin (a host older than projected responses: RawBodies) give the
// same listing; and a malformed or oversized page fails the listing alike,
// naming the page, with no node returned.
func TestWasmPluginWithAndWithoutProjectedResponses(t *testing.T) {
	nodes := fakeironic.Generate(2500, 12)
	fake := fakeironic.New(nodes, 82)
	srv := httptest.NewServer(fake)
	defer srv.Close()
	ctx := context.Background()
	var lists [2][]hostabi.Node
	for i, raw := range []bool{false, true} {
		p := loadWasmWith(t, srv.URL, map[string]any{"page_size": 1000}, wasmhost.Options{RawBodies: raw})
		got, err := p.ListNodes(ctx, hostabi.ListNodesRequest{})
		if err != nil || len(got) != len(nodes) {
			t.Fatalf("raw bodies %v: %d nodes, %v", raw, len(got), err)
		}
		lists[i] = got

		first := 0
		fake.BeforeList = func(w http.ResponseWriter, r *http.Request, n int) bool {
			if first == 0 {
				first = n
			}
			if n != first+1 { // the listing's second page
				return false
			}
			w.Header().Set("X-OpenStack-Ironic-API-Version", "1.82")
			w.Write([]byte(`{"nodes": [{"uuid": 7}]}`))
			return true
		}
		got, err = p.ListNodes(ctx, hostabi.ListNodesRequest{})
		want := "page 2: malformed body: json projection: nodes[0].uuid is a JSON number, want a string or null"
		if got != nil || err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("raw bodies %v, malformed page: %d nodes, %v; want %q", raw, len(got), err, want)
		}
		fake.BeforeList = nil

		small := loadWasmWith(t, srv.URL, map[string]any{"page_size": 1000}, wasmhost.Options{RawBodies: raw, MaxHTTPResponse: 100_000})
		got, err = small.ListNodes(ctx, hostabi.ListNodesRequest{})
		if want := "response body exceeds the 100000-byte cap"; got != nil || err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("raw bodies %v, page over the cap: %d nodes, %v; want %q", raw, len(got), err, want)
		}

		// 60 kB of empty nodes: within the body cap, but its frame is not
		// (13 fields of 8 bytes each, per node). Only a host that projects
		// says so, which shows the plugin asked it to.
		fake.BeforeList = func(w http.ResponseWriter, r *http.Request, n int) bool {
			w.Header().Set("X-OpenStack-Ironic-API-Version", "1.82")
			w.Write([]byte(`{"nodes": [` + strings.TrimSuffix(strings.Repeat("{},", 20_000), ",") + `]}`))
			return true
		}
		got, err = small.ListNodes(ctx, hostabi.ListNodesRequest{})
		fake.BeforeList = nil
		projectedCap := err != nil && strings.Contains(err.Error(), "projected response body exceeds the 100000-byte cap")
		if got != nil || err == nil || projectedCap == raw {
			t.Errorf("raw bodies %v, a page of empty nodes: %d nodes, %v", raw, len(got), err)
		}
	}
	if !reflect.DeepEqual(lists[0], lists[1]) {
		t.Fatal("the listings differ between projected and raw pages")
	}
}

// The host asks the Wasm plugin for the fields its rules name (an owner,
// a property, an extra key): every listing and node read carries them,
// projected by the host, answered in JSON; without them none is fetched.
func TestWasmPluginOptionalFields(t *testing.T) {
	nodes := fakeironic.Generate(30, 5)
	for i := range nodes {
		nodes[i].Owner = []string{"p-1", "p-2", ""}[i%3]
		nodes[i].Properties = map[string]any{"rack": "r" + string(rune('0'+i%4)), "cpus": 32}
		nodes[i].Extra = map[string]any{"row": i % 2}
	}
	fake := fakeironic.New(nodes, 82)
	srv := httptest.NewServer(fake)
	defer srv.Close()
	fields := hostabi.NodeFields{Owner: true, Properties: []string{"properties.rack", "extra.row"}}
	p := loadWasmWith(t, srv.URL, map[string]any{"page_size": 7}, wasmhost.Options{NodeFields: fields})
	ctx := context.Background()
	got, err := p.ListNodes(ctx, hostabi.ListNodesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(nodes) {
		t.Fatalf("%d nodes", len(got))
	}
	for i, n := range got {
		want := map[string]string{"properties.rack": "r" + string(rune('0'+i%4)), "extra.row": []string{"0", "1"}[i%2]}
		if n.Invalid != nil || n.Owner != nodes[i].Owner || !reflect.DeepEqual(n.Properties, want) {
			t.Fatalf("node %d: owner %q properties %v (invalid %v), want %q %v", i, n.Owner, n.Properties, n.Invalid, nodes[i].Owner, want)
		}
	}
	read, err := p.ReadNodes(ctx, []string{nodes[4].UUID})
	if err != nil || len(read) != 1 || !reflect.DeepEqual(read[0], got[4]) {
		t.Fatalf("read %+v, %v; listed %+v", read, err, got[4])
	}
	plain := loadWasm(t, srv.URL, map[string]any{"page_size": 7})
	before := len(fake.Requests())
	if got, err := plain.ListNodes(ctx, hostabi.ListNodesRequest{}); err != nil || got[0].Owner != "" || got[0].Properties != nil {
		t.Fatalf("without fields: %+v, %v", got[0], err)
	}
	for _, q := range fake.Requests()[before:] {
		if strings.Contains(q, "owner") || strings.Contains(q, "properties") || strings.Contains(q, "extra") {
			t.Fatalf("asked Ironic for fields no rule names: %s", q)
		}
	}
}
