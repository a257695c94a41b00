#!/usr/bin/env bash
# Appends the go test benchmarks that back performance claims to the
# report: plugin host per-call cost, Wasm versus native, decoders, and
# the runs behind the plugin-call ceilings (wasm/native <= 1.5,
# abi/native <= 1.2), which cmd/rpbench turns into the summary's rows.
set -euo pipefail
cd "$(dirname "$0")/.."
echo
echo "## go test benchmarks"
echo
echo "Command: \`go test -run '^\$' -bench . -benchtime 3x -count 3\` in each package below (medians by eye; rerun with benchstat for more)."
echo
echo '```'
for pkg in ./engine/placement github.com/rpengine/rpengine/hostabi/... ./plugins/fake ./plugins/ironic/...; do
	RPENGINE_PLUGIN_DIR="$PWD/build/plugins" go test -run '^$' -bench . -benchtime 3x -count 3 $pkg 2>&1 | grep -E '^(Benchmark|ok|FAIL|---)' || true
done
# The ABI's own codec, binary records against JSON (no plugin involved).
go test -run '^$' -bench 'Records10k' -benchtime 20x -count 3 ./internal/wasmhost 2>&1 | grep -E '^(Benchmark|ok|FAIL|---)' || true
echo '```'
echo
echo "The plugin-call ceiling rows of the summary are computed from the List10k and ListNodes10k lines above (cmd/rpbench -gobench)."
echo
echo "Rerun: \`RPENGINE_PLUGIN_DIR=\$PWD/build/plugins go test -run '^\$' -bench 'List10k|ListNodes10k' -benchtime 3x -count 3 ./plugins/fake ./plugins/ironic\` (after \`make plugins\`)."
echo
if [ "${BENCH:-quick}" != full ]; then
	echo "VMware plugin, Wasm against native: \`make bench BENCH=full\` (each start builds a 2,000-host vcsim, about 2 minutes)."
	exit 0
fi
echo "VMware plugin, 100 clusters x 20 hosts from vcsim, Wasm against native (one round: each start builds a 2,000-host vcsim, about 2 minutes):"
echo
echo '```'
RPENGINE_PLUGIN_DIR="$PWD/build/plugins" go test -run '^$' -bench 'List100x20|Load' -benchtime 3x -count 1 -timeout 60m ./plugins/vmware 2>&1 | grep -E '^(Benchmark|ok|FAIL|---)' || true
echo '```'
