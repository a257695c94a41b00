package main

// Benchmarks behind hostabi/RATIONALE.md, "JSON projection". Rerun:
//
//	go test -run '^$' -bench . -benchtime 10x -count 5 ./plugins/ironic/
//	GOEXPERIMENT=jsonv2 go test -run '^$' -bench Decode -benchtime 10x -count 5 ./plugins/ironic/   # adds jsontext
//
// and read medians. wasm runs use the engine's default isolation (the
// plugin host child process, guest code at full speed).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
	"github.com/rpengine/rpengine/internal/testing/guesttest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
	"github.com/rpengine/rpengine/internal/wasmhost"
	"github.com/rpengine/rpengine/plugins/ironic/internal/decoders"
	"github.com/rpengine/rpengine/plugins/ironic/internal/fakeironic"
	"github.com/rpengine/rpengine/plugins/ironic/ironic"
)

const benchNodes = 10000

// fleet serves benchNodes nodes in Ironic's response shape; pages are
// rendered once and then served from memory, so the server's own cost
// is small and the same for every variant.
func fleet(b *testing.B) string {
	b.Helper()
	srv := httptest.NewServer(fakeironic.New(fakeironic.Generate(benchNodes, 42), 82))
	b.Cleanup(srv.Close)
	return srv.URL
}

// BenchmarkListNodes10k is the plugin as the engine sees it: list_nodes
// for 10,000 nodes (10 pages of 1,000 over HTTP from a local server),
// three ways interleaved in the same run (guesttest.Compare):
//   - native: the plugin's code called in process, HTTP straight to the
//     server;
//   - native+abi: the same, through the SDK's dispatch and encoding of
//     the answer and the host's decoding of it into the engine's records
//     (wasmhost.Native): the part of the wasm path that is the ABI;
//   - wasm: the built ironic.wasm through wasmhost (the plugin host
//     process, HTTP via the host's gate, which projects each page as it
//     arrives and keeps it; the plugin answers by reference to those
//     pages, and the host builds the nodes from them);
//   - wasm-rpb1: the same on a host that offers no answers by reference
//     (Options.NoRefs): the plugin builds the nodes and the SDK encodes
//     them in binary records, which the host decodes (as before);
//   - wasm-raw: the same on a host that sends the pages' bodies, which
//     the plugin has projected through json_project (as before projected
//     responses).
//
// It reports the ratios of the plugin-call ceilings: wasm/native and abi/native.
func BenchmarkListNodes10k(b *testing.B) {
	url := fleet(b)
	ctx := context.Background()
	native := ironic.New(ironic.Config{PageSize: 1000}, hostTransport(url))
	abi, err := wasmhost.Native(ctx, wasmhost.NativeGuest{
		Label: "ironic (native+abi)",
		Handle: func(export string, in []byte) []byte {
			return guest.Handle(nativePlugin{&plugin{c: native}}, export, in)
		},
	}, nil, wasmhost.Options{NoRefs: true}) // its HTTP is the plugin's own, not the gate: nothing can be kept
	if err != nil {
		b.Fatal(err)
	}
	wasm := loadWasm(b, url, map[string]any{})
	// The same module on a host that sends the pages as they came (as
	// hosts before projected responses did): the plugin projects each one
	// through json_project, in the plugin host process.
	raw := loadWasmWith(b, url, map[string]any{}, wasmhost.Options{RawBodies: true})
	rpb1 := loadWasmWith(b, url, map[string]any{}, wasmhost.Options{NoRefs: true})
	list := func(p *wasmhost.Plugin) func(testing.TB) {
		return func(tb testing.TB) {
			nodes, err := p.ListNodes(ctx, hostabi.ListNodesRequest{})
			if err != nil || len(nodes) != benchNodes {
				tb.Fatal(len(nodes), err)
			}
		}
	}
	variants, cpu := withCPU([]guesttest.Variant{
		{Name: "native", Run: func(tb testing.TB) {
			if nodes, err := native.ListNodes(hostabi.ListNodesRequest{}); err != nil || len(nodes) != benchNodes {
				tb.Fatal(len(nodes), err)
			}
		}},
		{Name: "native+abi", Run: list(abi)},
		{Name: "wasm", Run: list(wasm)},
		{Name: "wasm-rpb1", Run: list(rpb1)},
		{Name: "wasm-raw", Run: list(raw)},
	})
	ratios := append(slices.Clone(guesttest.PluginRatios),
		guesttest.Ratio{Name: "wasm-rpb1/native", Num: "wasm-rpb1", Den: "native"},
		guesttest.Ratio{Name: "wasm-raw/native", Num: "wasm-raw", Den: "native"})
	guesttest.Compare(b, 5, variants, ratios)
	cpu(b, ratios)
}

// nativePlugin is the plugin with its client already made (HTTP straight
// to the server): configuring it changes nothing.
type nativePlugin struct{ *plugin }

func (nativePlugin) Configure([]byte) (string, error) { return "ironic", nil }

// BenchmarkDecode10k is the plugin's own processing alone: decoding the
// 10 pages of 10,000 nodes into hostabi.Node with each decoder, natively
// and inside a Wasm guest (timed by the guest's clock: guest-ms/op).
// "+encode" adds the SDK's encoding of the answer.
func BenchmarkDecode10k(b *testing.B) {
	url := fleet(b)
	pages := fakeironic.Pages(b, fakeironic.Generate(benchNodes, 42), 1000)
	names := make([]string, 0, len(decoders.All))
	for name := range decoders.All {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range append(names, "project+encode") {
		dec, encode := decoders.All[name], false
		if name == "project+encode" {
			dec, encode = decoders.All["project"], true
		}
		b.Run(name+"/native", func(b *testing.B) {
			var st [3]float64
			for b.Loop() {
				n, s, err := decoders.Run(pages, dec, encode)
				if err != nil || n != benchNodes {
					b.Fatal(n, err)
				}
				st[0], st[1], st[2] = st[0]+float64(s.Decode), st[1]+float64(s.Merge), st[2]+float64(s.Encode)
			}
			n := float64(b.N) * 1e6
			b.ReportMetric(st[0]/n, "decode-ms/op")
			b.ReportMetric(st[1]/n, "merge-ms/op")
			if encode {
				b.ReportMetric(st[2]/n, "encode-ms/op")
			}
		})
		b.Run(name+"/wasm", func(b *testing.B) {
			cfg := map[string]any{"decoder": name, "encode": encode}
			if g := os.Getenv("BENCH_GUEST_GOGC"); g != "" {
				cfg["gogc"], _ = strconv.Atoi(g)
			}
			if encode {
				cfg["decoder"] = "project"
			}
			p := loadBench(b, url, cfg)
			var st [3]float64 // decode, merge, encode: ns summed over b.N
			for b.Loop() {
				nodes, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{})
				if err != nil || len(nodes) != 1 || nodes[0].ResourceClass != strconv.Itoa(benchNodes) {
					b.Fatal(nodes, err)
				}
				for i, f := range strings.Split(nodes[0].Name, ",") {
					ns, _ := strconv.ParseFloat(f, 64)
					st[i] += ns
				}
			}
			n := float64(b.N) * 1e6
			b.ReportMetric((st[0]+st[1]+st[2])/n, "guest-ms/op")
			b.ReportMetric(st[0]/n, "decode-ms/op")
			b.ReportMetric(st[1]/n, "merge-ms/op")
			if encode {
				b.ReportMetric(st[2]/n, "encode-ms/op")
			}
		})
	}
}

func loadBench(b *testing.B, url string, cfg map[string]any) *wasmhost.Plugin {
	b.Helper()
	raw, _ := json.Marshal(cfg)
	p, err := wasmhost.Load(context.Background(), plugintest.Build(b, "plugins/ironic/internal/benchguest"), raw,
		wasmhost.Options{CacheDir: plugintest.CacheDir(), Services: map[string]string{"baremetal": url}, Clock: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close(context.Background()) })
	// The first call fetches the pages over HTTP; keep it out of the timing.
	if _, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{}); err != nil {
		b.Fatal(err)
	}
	return p
}

// hostTransport is guest.HTTP done natively, as the host's gate does it.
func hostTransport(base string) ironic.Transport {
	return func(req guest.HTTPRequest) (guest.HTTPResponse, error) { return nativeHTTP(base, req) }
}

// BenchmarkListNodesFields10k is what aggregate rules by owner or by a
// node property cost a listing of 10,000 nodes, each with an owner and
// Ironic's usual properties: wasm (no such rule: the listing by
// reference, as BenchmarkListNodes10k's) against wasm-fields (the host
// asks for the owner and properties.rack: Ironic returns owner and the
// properties objects, the plugin keeps the one key, the answer is JSON).
func BenchmarkListNodesFields10k(b *testing.B) {
	nodes := fakeironic.Generate(benchNodes, 42)
	for i := range nodes {
		nodes[i].Owner = fmt.Sprintf("%032x", i%50)
		nodes[i].Properties = map[string]any{"cpus": 64, "memory_mb": 262144, "local_gb": 1800, "cpu_arch": "x86_64",
			"capabilities": "boot_mode:uefi,secure_boot:true", "rack": fmt.Sprintf("r%d", i%40)}
	}
	srv := httptest.NewServer(fakeironic.New(nodes, 82))
	b.Cleanup(srv.Close)
	ctx := context.Background()
	fields := hostabi.NodeFields{Owner: true, Properties: []string{"properties.rack"}}
	list := func(p *wasmhost.Plugin, withFields bool) func(testing.TB) {
		return func(tb testing.TB) {
			got, err := p.ListNodes(ctx, hostabi.ListNodesRequest{})
			if err != nil || len(got) != benchNodes || withFields != (got[1].Properties["properties.rack"] == "r1") {
				tb.Fatal(len(got), err)
			}
		}
	}
	variants, cpu := withCPU([]guesttest.Variant{
		{Name: "wasm", Run: list(loadWasm(b, srv.URL, map[string]any{}), false)},
		{Name: "wasm-fields", Run: list(loadWasmWith(b, srv.URL, map[string]any{}, wasmhost.Options{NodeFields: fields}), true)},
	})
	ratios := []guesttest.Ratio{{Name: "fields/none", Num: "wasm-fields", Den: "wasm"}}
	guesttest.Compare(b, 5, variants, ratios)
	cpu(b, ratios)
}
