#!/usr/bin/env bash
# Appends the go test benchmarks that back performance claims to the
# report: plugin host per-call cost, Wasm versus native, decoders, and
# the runs behind the plugin-call ceilings (wasm/native <= 1.5,
# abi/native <= 1.2), which cmd/rpbench turns into the summary's rows.
set -euo pipefail
cd "$(dirname "$0")/.."
# mark says when the next run starts, its load, and its command, on the
# line cmd/rpbench stamps that run's rows with ("# run DATE, load L: CMD").
mark() {
	echo "# run $(date -u '+%Y-%m-%d %H:%M'), load $(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?'): $*"
}
echo
echo "## go test benchmarks"
echo
echo "Command: \`go test -run '^\$' -bench . -benchtime 3x -count 3\` in each package below (HugeListing, Records10k and VMware as scripts/bench-go.sh says; medians by eye; rerun with benchstat for more)."
echo
echo '```'
for pkg in ./engine/placement github.com/rpengine/rpengine/hostabi/... ./plugins/fake ./plugins/ironic/...; do
	mark "RPENGINE_PLUGIN_DIR=\$PWD/build/plugins go test -run '^\$' -bench . -skip HugeListing -benchtime 3x -count 3 $pkg"
	RPENGINE_PLUGIN_DIR="$PWD/build/plugins" go test -run '^$' -bench . -skip HugeListing -benchtime 3x -count 3 -timeout 30m $pkg 2>&1 | grep -E '^(Benchmark|ok|FAIL|---)' || true
done
# A listing past the caps: bytes and allocations, which one run gives
# (each run parses 262,144 providers, seconds apiece).
mark "go test -run '^\$' -bench HugeListing -benchtime 3x -count 1 ./engine/placement"
go test -run '^$' -bench HugeListing -benchtime 3x -count 1 -timeout 30m ./engine/placement 2>&1 | grep -E '^(Benchmark|ok|FAIL|---)' || true
# The ABI's own codec, binary records against JSON (no plugin involved).
mark "go test -run '^\$' -bench Records10k -benchtime 20x -count 3 ./internal/wasmhost"
go test -run '^$' -bench 'Records10k' -benchtime 20x -count 3 ./internal/wasmhost 2>&1 | grep -E '^(Benchmark|ok|FAIL|---)' || true
echo '```'
echo
echo "The plugin-call ceiling rows are computed from the List10k and ListNodes10k lines above and the VMware lines below, the Ironic proof row from ConfirmDeleted10k (cmd/rpbench -gobench)."
echo
echo "Rerun: \`RPENGINE_PLUGIN_DIR=\$PWD/build/plugins go test -run '^\$' -bench 'List10k|ListNodes10k' -benchtime 3x -count 3 ./plugins/fake ./plugins/ironic\` (after \`make plugins\`)."
echo
# VMware: one run in quick (each starts a 2,000-host vcsim, about 2
# minutes; the run interleaves 5 rounds of native, native+abi and wasm),
# three in full, which also times the module's compile.
rounds=1 benches='List100x20'
if [ "${BENCH:-quick}" = full ]; then
	rounds=3 benches='List100x20|Load'
fi
echo "VMware plugin, 100 clusters x 20 hosts from vcsim, Wasm against native ($rounds run(s), each starting a 2,000-host vcsim, about 2 minutes); its ceiling rows are the wasm/native ratios it reports (of wall and of CPU time), or that of its wasm and native ns/op:"
echo
echo '```'
mark "RPENGINE_PLUGIN_DIR=\$PWD/build/plugins go test -run '^\$' -bench '$benches' -benchtime 1x -count $rounds ./plugins/vmware"
RPENGINE_PLUGIN_DIR="$PWD/build/plugins" go test -run '^$' -bench "$benches" -benchtime 1x -count $rounds -timeout 60m ./plugins/vmware 2>&1 | grep -E '^(Benchmark|ok|FAIL|---|    )' || true
echo '```'
# One changed node synced at 100,000 providers (engine CPU, the state
# saved): the row against its goal of 5 ms (cmd/rpbench -gobench). The
# cold cycle that creates the providers first takes about a minute.
echo
echo "One node sync at 100,000 providers (engine/nodesync_bench_test.go; goal <= 5 ms engine CPU):"
echo
echo '```'
mark "go test -run '^\$' -bench NodeSync100k -benchtime 30x -count 1 ./engine/"
go test -run '^$' -bench NodeSync100k -benchtime 30x -count 1 -timeout 30m ./engine/ 2>&1 | grep -E '^(Benchmark|ok|FAIL|---)' || true
echo '```'
# A cold plan's reads of Placement against the cycle's it predicts
# (counts: one run).
echo
echo "A cold \`engine plan\` of 1,000 new providers, its reads of providers and the cycle's (engine/planreads_test.go; goal: no more than the cycle):"
echo
echo '```'
mark "go test -run '^\$' -bench PlanReads1k -benchtime 1x -count 1 ./engine/"
go test -run '^$' -bench PlanReads1k -benchtime 1x -count 1 -timeout 10m ./engine/ 2>&1 | grep -E '^(Benchmark|ok|FAIL|---)' || true
echo '```'
# The plugin host's warm start: compiling the largest module with a warm
# cache against reading its cache entry (the first compile fills it).
echo
echo "The plugin host's warm start, vmware.wasm (internal/wasmhost/warmstart_bench_test.go; goal: no more than 1.5 times a start that trusted its cache):"
echo
echo '```'
mark "RPENGINE_PLUGIN_DIR=\$PWD/build/plugins go test -run '^\$' -bench WarmCompileVMware -benchtime 5x -count 1 ./internal/wasmhost/"
RPENGINE_PLUGIN_DIR="$PWD/build/plugins" go test -run '^$' -bench WarmCompileVMware -benchtime 5x -count 1 -timeout 10m ./internal/wasmhost/ 2>&1 | grep -E '^(Benchmark|ok|FAIL|---)' || true
echo '```'
# The take-over of a departed peer's providers (docs/SCALEOUT.md):
# requests per provider taken over and wall time, with and without the
# shared record; a restart beside another owner's providers; and the
# spread of partitions over 2-8 engines.
echo
echo "Take-over, in the in-repo fake Placement (engine/takeover_bench_test.go, and FleetTakeOver in engine/fleet_bench_test.go beside nova with the fleet's marker; goal <= 1.5 requests a provider taken over, <= 60 s at 50,000; a restart beside 10,000 providers another engine keeps, <= 3 requests):"
echo
echo '```'
mark "go test -run '^\$' -bench 'TakeOver|RestartBeside' -benchtime 1x ./engine/"
go test -run '^$' -bench 'TakeOver|RestartBeside' -benchtime 1x -timeout 30m ./engine/ 2>&1 | grep -E '^(Benchmark|ok|FAIL|---)' || true
echo '```'
echo
echo "Partitions held by each live engine, rendezvous with bounded loads (internal/coord TestAssignSpread):"
echo
echo '```'
mark "go test -count=1 -v -run 'TestAssignSpread\$' ./internal/coord/"
go test -count=1 -v -run 'TestAssignSpread$' ./internal/coord/ 2>&1 | grep -oE 'SPREAD .*' | grep -vE 'partitions=2 ' || true
echo '```'
