#!/usr/bin/env bash
# Runs every Go fuzz target in the module for FUZZTIME each (default 10s).
# Usage: scripts/fuzz.sh [FUZZTIME]
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-10s}
# modroot prints the directory of the go.mod that owns $1: hostabi is its
# own module, and -fuzz works only on packages of the main module.
modroot() { local d=$1; while [ ! -f "$d/go.mod" ]; do d=$(dirname "$d"); done; echo "$d"; }
grep -rl --include='*_test.go' '^func Fuzz' . | while read -r f; do
	dir=$(dirname "$f")
	for name in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | cut -d' ' -f2); do
		echo "fuzz $dir $name ($t)"
		root=$(modroot "$dir") rel=${dir#"$(modroot "$dir")"}
		fuzz() { go -C "$root" test -run '^$' -fuzz "^${name}\$" -fuzztime "$t" "./${rel#/}" >/tmp/fuzz.$$ 2>&1; }
		# Go's fuzzer can fail with "context deadline exceeded" when
		# -fuzztime runs out while a worker is busy, writing no input: that
		# is the fuzzer's own time-out, not a finding, so it runs once more.
		# A real finding says "Failing input written to" and fails at once.
		if ! fuzz; then
			if grep -q 'context deadline exceeded' /tmp/fuzz.$$ && ! grep -q 'Failing input written to' /tmp/fuzz.$$; then
				echo "fuzz $dir $name: the fuzzer's own time-out, no failing input; once more"
				fuzz || { cat /tmp/fuzz.$$; rm -f /tmp/fuzz.$$; exit 1; }
			else
				cat /tmp/fuzz.$$; rm -f /tmp/fuzz.$$; exit 1
			fi
		fi
	done
done
rm -f /tmp/fuzz.$$
