#!/usr/bin/env bash
# Runs every Go fuzz target under DIR (default: the repository) for
# FUZZTIME each (default 10s).
# Usage: scripts/fuzz.sh [FUZZTIME [DIR]]
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-10s}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# modroot prints the directory of the go.mod that owns $1: hostabi is its
# own module, and -fuzz works only on packages of the main module.
modroot() { local d=$1; while [ ! -f "$d/go.mod" ]; do d=$(dirname "$d"); done; echo "$d"; }

# fuzz runs target $name of package $rel in module $root into $log. Go
# minimizes each new interesting input for up to 60 s, fuzzing nothing
# meanwhile; 10 s leaves a long run its time (FuzzProject over 120 s:
# 2.3 million inputs, against 23,000 in 100 s under the default).
fuzz() { go -C "$root" test -run '^$' -fuzz "^${name}\$" -fuzztime "$t" -fuzzminimizetime 10s "./${rel#/}" >"$log" 2>&1; }

# spurious says why the failed run in $log is the fuzzer's own failure
# under load, not a finding, and fails (saying why on stderr) when it may
# be a finding.
spurious() {
	if grep -q 'Failing input written to' "$log"; then
		stalled
	elif grep -q 'context deadline exceeded' "$log"; then
		# -fuzztime ran out while the fuzzer shut down (its context
		# races its own deadline); no input failed.
		echo "the fuzzer's own time-out, no failing input"
	elif grep -q 'no crash will be recorded' "$log"; then
		# A worker killed by a signal no input sends (the OOM killer
		# under a neighbour's load); Go records no input.
		echo "a worker killed from outside, no failing input"
	else
		return 1
	fi
}

# stalled: a worker that does not return within 10 s is taken for hung
# and its input written as failing. That is load, not the input, only
# when the input, run alone, passes at once; a failure or a slow input
# is a finding. The written file is removed: it is no test case.
stalled() {
	grep -q 'fuzzing process hung or terminated unexpectedly' "$log" || return 1
	local path id took
	path=$(sed -n 's/^ *Failing input written to //p' "$log" | head -1)
	id=${path##*/}
	go -C "$root" test -count=1 -v -timeout 60s -run "^${name}\$/^${id}\$" "./${rel#/}" >"$log.alone" 2>&1 || { cat "$log.alone" >&2; rm -f "$log.alone"; return 1; }
	took=$(sed -n "s/.*--- PASS: ${name}\/${id} (\([0-9.]*\)s).*/\1/p" "$log.alone")
	rm -f "$log.alone"
	awk -v s="${took:-99}" 'BEGIN { exit !(s < 1) }' || { echo "fuzz $name: input $path takes ${took:-?}s alone" >&2; return 1; }
	git -C "$root/${rel#/}" ls-files --error-unmatch "$path" >/dev/null 2>&1 || rm -f "$root/${rel#/}/$path"
	echo "a worker stalled past the fuzzer's 10 s limit; input $id passes alone in ${took}s"
}

grep -rl --include='*_test.go' '^func Fuzz' "${2:-.}" | while read -r f; do
	dir=$(dirname "$f")
	for name in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | cut -d' ' -f2); do
		echo "fuzz $dir $name ($t)"
		root=$(modroot "$dir") rel=${dir#"$(modroot "$dir")"}
		fuzz && continue
		# A failure the fuzzer makes itself under load runs once more;
		# any other, or a second one, fails.
		if why=$(spurious); then
			echo "fuzz $dir $name: $why; once more"
			fuzz && continue
		fi
		cat "$log"
		exit 1
	done
done
