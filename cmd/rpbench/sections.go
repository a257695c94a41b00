package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rpengine/rpengine/internal/testing/bench"
)

func novaSection(path string) (bench.Section, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return bench.Section{}, fmt.Errorf("-nova: %w", err)
	}
	body := `Measured side by side in one run: nova 26.2.2's own reporting path (the real ` + "`ComputeManager.update_available_resource`" + `
with the Ironic driver, scripts/nova/driver.py) and the engine (` + "`engine once`" + `, Ironic plugin in Wasm, state file set)
over the same real Ironic (fake-hardware nodes, all available, no instances), each with a fresh real Placement 8.0
(single process, sqlite), both behind one request-counting proxy (internal/testing/bench/counter.go). Request counts are
exact. CPU is user+system: nova's is its process's time inside the periodic (a long-running nova-compute); the
engine's is the whole ` + "`engine once`" + ` process (start-up, plugin load from the warm compile cache, plugin child
process, listing, cycle), so it overstates a running engine's cycle. Wall and CPU move with the machine's load
(stated at the top); the request counts and ratios are the figures to quote. Cells show min / median / max of the rounds (one value when all agree); ratios are of medians.
"one node into or out of maintenance" is two rounds: into, then out again.

Rerun: ` + "`make build plugins`, then `RPBENCH_NOVA=1 RPBENCH_NOVA_SIZES=50,200,500 RPBENCH_NOVA_ROUNDS=3 RPBENCH_NOVA_OUT=nova.md RPENGINE_PLUGIN_DIR=$PWD/build/plugins RPENGINE_ENGINE_BIN=$PWD/bin/engine go test ./internal/testing/bench -run TestNovaSideBySide -v -timeout 150m`" + `
(make bench runs 50 nodes and the bug 1841481 replay; BENCH=full adds 200 and 500). Runs at 50, 200 and 500 nodes
made on 2026-12-01 on a loaded machine, with their commands and wall times, are in
[internal/testing/bench/testdata/nova-measured-2026-12-01.md](internal/testing/bench/testdata/nova-measured-2026-12-01.md).

` + string(b)
	return bench.Section{Title: "nova 26.2.2 side by side (measured)", Body: body}, nil
}

func reshaperSection(path string) (bench.Section, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return bench.Section{}, fmt.Errorf("-reshaper: %w", err)
	}
	body := `Experiment (bench-only, internal/testing/bench/reshaper.go; the engine is unchanged): create new providers with POST and
PUT traits as before, but write the inventories of each batch of 50 new providers in one ` + "`POST /reshaper`" + `
(microversion 1.30, empty allocations): 2 + 1/50 requests per provider instead of 3. Compared with the per-provider
writes of the bare client (internal/testing/bench/bare.go) at the same concurrency (4), fresh uuids, alternating which goes
first; each Placement started fresh. Rates move with the machine's load; the ratio is paired per round, and still
moves: a run at a load average of 8–15 gave 0.82–0.93 where quiet runs gave 1.23–1.40, so read the verdict only
from a quiet run. TestReshaperWrites checks the end state (each provider's inventory equal to the per-provider write's).
Rerun: ` + "`RPBENCH_RESHAPER=1 RPBENCH_RESHAPER_NODES=200 RPBENCH_RESHAPER_ROUNDS=2 RPBENCH_RESHAPER_OUT=reshaper.md go test ./internal/testing/bench -run TestReshaperBench -v -timeout 40m`" + `.

` + string(b)
	return bench.Section{Title: "POST /reshaper for new providers' inventories (experiment)", Body: body}, nil
}

func eventsSection(path string) (bench.Section, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return bench.Section{}, fmt.Errorf("-events: %w", err)
	}
	body := `How long a change in Ironic takes to reach Placement (internal/testing/bench/events_test.go, docs/EVENTS.md): ` +
		"`engine run`" + ` with the Ironic plugin on the real Ironic 21.4 and a real Placement each, once with [events] (Ironic's
notifications on Debian's RabbitMQ, full cycles every 10 min) and once periodic at the default engine.interval (60 s).
A change is a resource_class PATCH on an enrolled node, one every 0.5 s; its lag runs from the PATCH's return until
Placement holds the new class (polled every 50 ms with events, 2 s periodic). Goal with events: p99 <= 2 s.
Rerun: ` + "`RPBENCH_EVENTS=1 RPENGINE_ENGINE_BIN=$PWD/bin/engine RPENGINE_PLUGIN_DIR=$PWD/build/plugins RPBENCH_EVENTS_OUT=events.md go test ./internal/testing/bench -run TestEventLagBench -v -timeout 60m`" + ` (after make build plugins).

` + string(b)
	return bench.Section{Title: "Event-driven lag beside the periodic engine", Body: body}, nil
}

func eventsScaleSection(path string) (bench.Section, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return bench.Section{}, fmt.Errorf("-events-scale: %w", err)
	}
	body := eventsScaleIntro + "\n\n" + string(b)
	return bench.Section{Title: "Events at fleet scale", Body: body}, nil
}

func kubeSoakSection(path string) (bench.Section, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return bench.Section{}, fmt.Errorf("-kube-soak: %w", err)
	}
	return bench.Section{Title: "Kubernetes backend: engines joining and leaving", Body: kubeSoakIntro + "\n\n" + string(b)}, nil
}

// kubeSoakIntro says what the Kubernetes soak measures and how to rerun it.
const kubeSoakIntro = `Engines coordinating through a real kube-apiserver (e2e/scaleout_kube_soak_test.go; 60 fake nodes, 30 partitions, ` +
	`engine.interval 1 s, lease_ttl 1 s, the shared Placement), about 40 cycles an engine in each phase while engines join and leave. ` +
	"Requests are the engine's own count (`rpengine_coord_requests_total`: every API request, a watch counted once when opened) " +
	`over its cycles. Goal: O(1) per engine and cycle when nothing changes, whatever the fleet. At lease_ttl 1 s the member ` +
	`Lease is renewed every quarter TTL (internal/coord/kube_session.go), about 4 requests a second whatever the cycles; ` +
	`the rest, about one a cycle, is the cycle's sync.
Rerun: ` + "`RPENGINE_KUBE_E2E=1 RPBENCH_KUBE_SOAK=1 RPENGINE_PLUGIN_DIR=$PWD/build/plugins RPENGINE_ENGINE_BIN=$PWD/bin/engine go test -count=1 -v -run TestKubeSoakBench ./e2e/`" + ` (after make build plugins; scripts/kube/install.sh builds the API server once).`

// eventsScaleIntro says what the events-at-scale bench measures and how
// to rerun it.
const eventsScaleIntro = `The event path against the real Ironic 21.4 (its own notifications on Debian's RabbitMQ) and a real Placement ` +
	"(internal/testing/bench/events_scale_test.go, docs/EVENTS.md): `engine run` with [events], full cycles every 10 min, the probe off " +
	`while requests per change are counted (its cost is added per hour below). The engine reaches Ironic through a proxy that counts its ` +
	`requests and, for the long cycle, holds each listing page back. Goals: a mixed workload at most 1.2 Ironic requests per change; ` +
	`a burst of 5,000 notifications over 1,000 nodes drained within 30 s with no plugin timeout; p99 <= 2 s during a long full cycle.
The last line is TestEventSlowServicesBench: the lag when every request of the engine costs 0.3-1.5 s.
Rerun: ` + "`RPBENCH_EVENTS=1 RPBENCH_EVENTS_SCALE_NODES=1000,10000 RPENGINE_ENGINE_BIN=$PWD/bin/engine RPENGINE_PLUGIN_DIR=$PWD/build/plugins RPBENCH_EVENTS_SCALE_OUT=scale.md RPBENCH_EVENTS_SLOW_OUT=slow.md go test ./internal/testing/bench -run 'TestEventScaleBench|TestEventSlowServicesBench' -v -timeout 90m`" + ` (after make build plugins).`

// goBenchSection turns the go test benchmarks (scripts/bench-go.sh's
// Markdown) into ceiling rows and includes it as it is.
func goBenchSection(path string) ([]bench.Stamped, bench.Section, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, bench.Section{}, fmt.Errorf("-gobench: %w", err)
	}
	ms, err := bench.ParseGoBench(bytes.NewReader(b))
	if err != nil {
		return nil, bench.Section{}, fmt.Errorf("-gobench: %w", err)
	}
	rows := append(append(bench.PluginCeilings(ms), bench.ProofRows(ms)...), bench.NodeSyncRows(ms)...)
	rows = append(append(rows, bench.PlanReadsRows(ms)...), bench.WarmStartRows(ms)...)
	rows = append(append(rows, bench.ListingRows(ms)...), bench.DecodeFloorRow(ms)...)
	return append(rows, bench.MissingRows(ms)...), bench.Section{Body: string(b)}, nil
}

type curveKind struct {
	label, short, color string
	start               func(root string) (*bench.Child, error)
}

var curveKinds = map[string]curveKind{
	"prod":   {"uWSGI 4 workers + MariaDB", "uWSGI+MariaDB", "#1f77b4", func(root string) (*bench.Child, error) { return bench.StartProd(root, 18781, 4) }},
	"sqlite": {"single process + sqlite", "sqlite", "#ff7f0e", func(root string) (*bench.Child, error) { return bench.StartReal(root, 18783) }},
}

// curveSection measures the cold-start curve on the production-shaped
// Placement and on the single-process sqlite one, and draws it next to
// the report.
func curveSection(ctx context.Context, o options) (bench.Section, error) {
	var concs []int
	for _, s := range strings.Split(o.curveC, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return bench.Section{}, fmt.Errorf("-curve: %w", err)
		}
		concs = append(concs, c)
	}
	salt := uint32(os.Getpid()) << 12
	var rows []bench.Stamped
	var series []bench.Series
	var labels []string
	for i, name := range strings.Split(o.curveKinds, ",") {
		k, ok := curveKinds[strings.TrimSpace(name)]
		if !ok {
			return bench.Section{}, fmt.Errorf("-curve-kinds: %q is not prod or sqlite", name)
		}
		fmt.Fprintf(os.Stderr, "rpbench: cold-start curve on Placement %s at %d nodes\n", k.label, o.curveN)
		c, err := k.start(o.root)
		if err != nil {
			return bench.Section{}, err
		}
		pts, err := bench.ColdCurve(ctx, c.URL, o.curveN, o.curveR, concs, salt+uint32(i)<<24)
		c.Stop()
		if err != nil {
			return bench.Section{}, err
		}
		labels = append(labels, k.label)
		rows = append(rows, bench.Stamp(fmt.Sprintf("go run ./cmd/rpbench -out /tmp/b.md -sizes '' -real 0 -prod 0 -first-start=false "+
			"-curve-nodes %d -curve %s -curve-rounds %d -curve-kinds %s", o.curveN, o.curveC, o.curveR, name),
			bench.CurveRows("Placement 8.0, "+k.label, o.curveN, pts)...)...)
		series = append(series,
			bench.Series{Name: "engine, " + k.short, Color: k.color, Points: pts},
			bench.Series{Name: "bare, " + k.short, Color: k.color, Dashed: true, Bare: true, Points: pts})
	}
	svgName := strings.TrimSuffix(filepath.Base(o.out), filepath.Ext(o.out)) + "-cold-curve.svg"
	var svg bytes.Buffer
	bench.PlotSVG(&svg, fmt.Sprintf("Cold start of %d providers against Placement 8.0", o.curveN), series)
	if err := os.WriteFile(filepath.Join(filepath.Dir(o.out), svgName), svg.Bytes(), 0o644); err != nil {
		return bench.Section{}, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Cold start: %d new providers created by the engine (one cycle, `engine.concurrency` = c) and by the bare\n", o.curveN)
	fmt.Fprintf(&b, "client (internal/testing/bench/bare.go: the same three requests per provider, c connections), alternating which goes\n")
	fmt.Fprintf(&b, "first, each round with fresh uuids, on each Placement started fresh for the curve (%s).\n", strings.Join(labels, "; "))
	fmt.Fprintf(&b, "Production-shaped: Debian's uWSGI, 4 single-threaded worker processes, on Debian's MariaDB 10.11 with its\n")
	fmt.Fprintf(&b, "default durability (scripts/placement-prod). Rates move with the machine's load; the engine/bare ratio is\n")
	fmt.Fprintf(&b, "paired within each round. Rerun: `go run ./cmd/rpbench -sizes '' -real 0 -prod 0 -curve-nodes %d -curve %s -curve-rounds %d -curve-kinds %s -out reports/BENCHMARKS.md`.\n\n",
		o.curveN, o.curveC, o.curveR, o.curveKinds)
	fmt.Fprintf(&b, "![cold-start rate against engine.concurrency](%s)\n\n", svgName)
	explain(rows, o.root, filepath.Dir(o.out))
	fmt.Fprintln(&b, "| figure | fleet | engine; bare; engine / bare in the same round | goal | met | measured |\n|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", r.Metric, r.Fleet, r.Value, r.Goal, r.Met, r.At)
	}
	return bench.Section{Title: "Cold start against engine.concurrency", Body: b.String()}, nil
}
