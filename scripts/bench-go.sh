#!/usr/bin/env bash
# Appends the go test benchmarks that back performance claims to the
# report: plugin host per-call cost, Wasm versus native, decoders.
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
echo '```'
echo
echo "VMware plugin, 100 clusters x 20 hosts from vcsim, Wasm against native (one round: each start builds a 2,000-host vcsim, about 2 minutes):"
echo
echo '```'
RPENGINE_PLUGIN_DIR="$PWD/build/plugins" go test -run '^$' -bench 'List100x20|Load' -benchtime 3x -count 1 -timeout 60m ./plugins/vmware 2>&1 | grep -E '^(Benchmark|ok|FAIL|---)' || true
echo '```'
