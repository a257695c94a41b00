#!/usr/bin/env bash
# Appends the go test benchmarks that back performance claims to the
# report: plugin host per-call cost, Wasm versus native, decoders, and
# the plugin-call ceilings of issue 17 (wasm/native <= 1.5, abi/native <=
# 1.2), summarised as min/median/max over the rounds.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo
echo "## go test benchmarks"
echo
echo "Command: \`go test -run '^\$' -bench . -benchtime 3x -count 3\` in each package below (medians by eye; rerun with benchstat for more)."
echo
echo '```'
for pkg in ./engine/placement github.com/rpengine/rpengine/hostabi/... ./plugins/fake ./plugins/ironic/...; do
	RPENGINE_PLUGIN_DIR="$PWD/build/plugins" go test -run '^$' -bench . -benchtime 3x -count 3 $pkg 2>&1 | grep -E '^(Benchmark|ok|FAIL|---)' | tee -a "$out" || true
done
# The ABI's own codec, binary records against JSON (no plugin involved).
go test -run '^$' -bench 'Records10k' -benchtime 20x -count 3 ./internal/wasmhost 2>&1 | grep -E '^(Benchmark|ok|FAIL|---)' || true
echo '```'
echo
echo "Plugin-call ceilings at 10,000 nodes (issue 17), each ratio of medians measured in one run with its baseline (guesttest.Compare: native, native+abi and wasm interleaved, 15 calls each); min / median / max of the 3 runs. Goals: wasm/native <= 1.5, abi/native <= 1.2."
echo
echo "| benchmark | metric | min | median | max |"
echo "|---|---|---|---|---|"
awk '/^Benchmark(List10k|ListNodes10k)-/ {
	name = $1; sub(/-[0-9]+$/, "", name)
	for (i = 3; i < NF; i += 2) if ($(i+1) ~ /(\/|-ms$)/) v[name" | "$(i+1)] = v[name" | "$(i+1)] " " $i
}
END {
	for (k in v) {
		n = split(substr(v[k], 2), a, " ")
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
		printf "| %s | %s | %s | %s |\n", k, a[1], a[int((n + 1) / 2)], a[n]
	}
}' "$out" | sort | sed 's/^| BenchmarkList10k /| plugins\/fake BenchmarkList10k /; s/^| BenchmarkListNodes10k /| plugins\/ironic BenchmarkListNodes10k /'
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
