#!/usr/bin/env bash
# The cold `engine once` of make bench's "peak RSS of `engine once`, MB:
# the cold run creating every provider" row, alone: a fresh fake Placement
# (rpbench fake-placement), the config of internal/testing/bench/process.go,
# and rpbench run-measured, whose maxrss is the larger of the engine and its
# plugin host. With GONE=1 it then runs the row "every node gone at the
# source" (nodes = 0, same state file). Prints wall, peak RSS, CPU and the
# load average. Needs `make build plugins`. ENGINE names another engine
# binary (the code before a change, say: rounds of both, interleaved);
# RPBENCH a built cmd/rpbench (else it is built here).
#
# With HEAP=1 it first prints the heap profile of the same cold cycle in
# a test process (engine's BenchmarkColdCycle100k: peak live and
# allocated heap, then what allocates the most; the profile's in-use
# view is taken after the cycle, so it says nothing of the peak).
#
#	scripts/cold-rss.sh [NODES]        # default 100000
#	ENGINE=/tmp/old-engine scripts/cold-rss.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD nodes=${1:-100000}
engine=${ENGINE:-$root/bin/engine}
if [ -n "${HEAP:-}" ]; then
	prof=$(mktemp -d)
	go test -run '^$' -bench 'ColdCycle100k$' -benchtime 1x -memprofile "$prof/cold.mem" -o "$prof/engine.test" ./engine |
		grep -E '^Benchmark'
	echo "heap profile: allocated over the cycle"
	go tool pprof -sample_index=alloc_space -top -nodecount 12 "$prof/engine.test" "$prof/cold.mem" 2>/dev/null | sed -n '/^Showing/,$p'
	rm -rf "$prof"
fi
rpbench=${RPBENCH:-}
if [ -z "$rpbench" ]; then
	go build -o build/rpbench ./cmd/rpbench
	rpbench=$root/build/rpbench
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
coproc FAKE { exec "$rpbench" fake-placement; }
read -r url <&"${FAKE[0]}"
config() {
	cat >"$dir/config.toml" <<C
[engine]
id = "bench-process"
state_file = "state.json"
concurrency = 4
[placement]
endpoint = "$url"
token = "admin"
[plugin]
path = "$root/build/plugins/fake.wasm"
memory_limit = "1GiB"
timeout = "300s"
cache_dir = "cache"
[plugin.config]
nodes = $1
seed = 7
C
}
measure() {
	local l0 out
	l0=$(cut -d' ' -f1 /proc/loadavg)
	out=$(cd "$dir" && "$rpbench" run-measured "$engine" once --config "$dir/config.toml")
	echo "$out" | awk -v what="$1" -v l0="$l0" -v l1="$(cut -d' ' -f1 /proc/loadavg)" \
		'{ printf "%s: wall %.1f s, peak RSS %.0f MB, CPU %.1f s (engine and plugin host), load %s..%s\n", what, $1/1e9, $2/1e6, $3/1e9, l0, l1 }'
}
config "$nodes"
measure "cold run, $nodes nodes"
if [ -n "${GONE:-}" ]; then
	config 0
	measure "every node gone, $nodes providers"
fi
eval "exec ${FAKE[1]}>&-" # the fake serves until its stdin closes
wait
