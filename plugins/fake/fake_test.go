package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
	"github.com/rpengine/rpengine/internal/testing/guesttest"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

func newFake() guest.Plugin { return &fake{} }

// Every test here runs twice: natively and in the sandbox.
func run(t *testing.T, test func(t *testing.T, load guesttest.Loader)) {
	guesttest.Run(t, ".", newFake, wasmhost.Options{}, test)
}

func TestGeneratedWorld(t *testing.T) {
	run(t, func(t *testing.T, load guesttest.Loader) {
		p := load.OK(t, map[string]any{"nodes": 40, "seed": 3, "instance_fraction": 0.5, "shards": []string{"a", "b"}})
		nodes, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		inst, err := p.ListInstances(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes) != 40 || len(inst) == 0 || nodes[1].Shard != "b" || p.Name() != "fake" {
			t.Fatalf("%d nodes, %d instances, name %q, node 1 %+v", len(nodes), len(inst), p.Name(), nodes[1])
		}
	})
}

// The same seed gives the same world natively and in the sandbox.
func TestNativeAndWasmAgree(t *testing.T) {
	cfg := map[string]any{"nodes": 100, "seed": 42, "instance_fraction": 0.3, "maintenance_fraction": 0.1,
		"resource_classes": []string{"gold", "silver"}}
	list := func(load guesttest.Loader) []hostabi.Node {
		nodes, err := load.OK(t, cfg).ListNodes(context.Background(), hostabi.ListNodesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return nodes
	}
	native := list(guesttest.NativeLoader(newFake, wasmhost.Options{}))
	wasm := list(guesttest.WasmLoader(guesttest.Build(t, "."), wasmhost.Options{}))
	if !reflect.DeepEqual(native, wasm) {
		t.Fatal("the native and the wasm plugin list different worlds")
	}
}

func TestBadConfig(t *testing.T) {
	run(t, func(t *testing.T, load guesttest.Loader) {
		for cfg, want := range map[string]string{
			`{"nodez": 1}`:                   `unknown field "nodez"`,
			`{"nodes": -1}`:                  "nodes = -1, want >= 0",
			`{"fault": "melt"}`:              `fault = "melt"`,
			`{"fault_in": "configure"}`:      `fault_in = "configure"`,
			`{"instance_fraction": 2}`:       "instance_fraction = 2, want 0..1",
			`{"maintenance_fraction": -0.5}`: "maintenance_fraction = -0.5, want 0..1",
		} {
			_, err := load(t, []byte(cfg))
			if !wasmhost.IsKind(err, wasmhost.KindPlugin) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: err = %v, want %q", cfg, err, want)
			}
		}
	})
}

// confirm_deleted: deleted when not in the world, present when in it,
// neither for unknown_nodes.
func TestConfirmDeleted(t *testing.T) {
	const (
		inWorld = "aaaaaaaa-0000-4000-8000-000000000001"
		gone    = "bbbbbbbb-0000-4000-8000-000000000002"
		unknown = "cccccccc-0000-4000-8000-000000000003"
	)
	run(t, func(t *testing.T, load guesttest.Loader) {
		p := load.OK(t, map[string]any{
			"node":          []map[string]any{{"uuid": inWorld, "resource_class": "gold"}},
			"unknown_nodes": []string{unknown},
		})
		if !p.Supports(hostabi.ExportConfirmDeleted) {
			t.Fatal("the fake plugin must support confirm_deleted")
		}
		deleted, present, err := p.ConfirmDeleted(context.Background(), []string{inWorld, gone, unknown})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(deleted, []string{gone}) || !slices.Equal(present, []string{inWorld}) {
			t.Fatalf("deleted %v, present %v", deleted, present)
		}
	})
}

func TestFaultsInOtherOperations(t *testing.T) {
	run(t, func(t *testing.T, load guesttest.Loader) {
		p := load.OK(t, map[string]any{"nodes": 2, "fault": "error", "fault_in": "confirm_deleted"})
		if _, _, err := p.ConfirmDeleted(context.Background(), []string{"x"}); !wasmhost.IsKind(err, wasmhost.KindPlugin) ||
			!strings.Contains(err.Error(), "injected failure in confirm_deleted") {
			t.Fatalf("err = %v", err)
		}
		if _, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{}); err != nil {
			t.Fatal(err)
		}
	})
}

// BenchmarkList10k lists a 10,000-node world three ways in the same
// run, interleaved (guesttest.Compare), and reports the ratios the
// plugin-call ceilings are about:
//   - native: the plugin's own code, called in process;
//   - native+abi: the same plus the SDK's encoding of the answer and the
//     host's decoding of it, as the engine receives it (no sandbox);
//   - wasm: the built fake.wasm in the plugin host process (the default).
//
// The fake's own work is a copy of its world, so "native" is tiny and the
// ratios over it mostly measure the ABI; wasm/abi is the sandbox's share.
func BenchmarkList10k(b *testing.B) {
	cfg := map[string]any{"nodes": 10000, "seed": 1, "instance_fraction": 0.3}
	raw, _ := json.Marshal(cfg)
	own := &fake{}
	if _, err := own.Configure(raw); err != nil {
		b.Fatal(err)
	}
	abi := guesttest.NativeLoader(newFake, wasmhost.Options{}).OK(b, cfg)
	wasm := guesttest.WasmLoader(guesttest.Build(b, "."), wasmhost.Options{}).OK(b, cfg)
	list := func(p *wasmhost.Plugin) func(testing.TB) {
		return func(tb testing.TB) {
			nodes, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{})
			if err != nil || len(nodes) != 10000 {
				tb.Fatal(len(nodes), err)
			}
		}
	}
	guesttest.Compare(b, 5, []guesttest.Variant{
		{Name: "native", Run: func(tb testing.TB) {
			if nodes, err := own.ListNodes(hostabi.ListNodesRequest{}); err != nil || len(nodes) != 10000 {
				tb.Fatal(len(nodes), err)
			}
		}},
		{Name: "native+abi", Run: list(abi)},
		{Name: "wasm", Run: list(wasm)},
	}, guesttest.PluginRatios)
}

// The world's uuids and names are what fmt made of them before, so a
// seed still yields the same fleet.
func TestWorldFormatsAsFmtDid(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 0x5eed))
	for i := range 2000 {
		want := rand.New(rand.NewPCG(uint64(i), 1))
		a, b := want.Uint64(), want.Uint64()
		a = a&^(0xf<<12) | 4<<12
		b = b&^(3<<62) | 2<<62
		wantUUID := fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", a>>32, (a>>16)&0xffff, a&0xffff, b>>48, b&0xffffffffffff)
		if got := uuid(rand.New(rand.NewPCG(uint64(i), 1))); got != wantUUID {
			t.Fatalf("uuid %q, fmt gives %q", got, wantUUID)
		}
		n := i * int(rng.Uint32N(200))
		if got, want := nodeName(n), fmt.Sprintf("node-%05d", n); got != want {
			t.Fatalf("nodeName(%d) = %q, want %q", n, got, want)
		}
	}
}
