#!/usr/bin/env bash
# Runs every Go fuzz target in the module for FUZZTIME each (default 10s).
# Usage: scripts/fuzz.sh [FUZZTIME]
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-10s}
grep -rl --include='*_test.go' '^func Fuzz' . | while read -r f; do
	dir=$(dirname "$f")
	for name in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | cut -d' ' -f2); do
		echo "fuzz $dir $name ($t)"
		go test -run '^$' -fuzz "^${name}\$" -fuzztime "$t" "$dir" >/tmp/fuzz.$$ 2>&1 || { cat /tmp/fuzz.$$; rm -f /tmp/fuzz.$$; exit 1; }
	done
done
rm -f /tmp/fuzz.$$
