#!/usr/bin/env bash
# failed-tests.sh LOG: from a `go test -v` log, print what a failed CI run
# needs to be diagnosed: each failed top-level test's own output (its last
# 150 lines) and each panic or fatal error with the 40 lines after it.
# Bounded, so a broken run cannot flood the CI log.
set -euo pipefail
log=$1
{ grep -E '^--- FAIL: Test' "$log" || true; } | awk '{print $3}' | sort -u | head -n 10 | while read -r name; do
	echo "CI: output of $name (last 150 lines):"
	awk -v n="$name" '
		$0 == "=== RUN   " n { buf = ""; on = 1 }
		on { buf = buf $0 "\n" }
		on && index($0, "--- FAIL: " n " ") == 1 { printf "%s", buf; on = 0 }
	' "$log" | tail -n 150
done
{ grep -n -E '(http: panic serving|^panic: |^fatal error: )' "$log" || true; } | head -n 5 | cut -d: -f1 | while read -r line; do
	echo "CI: log line $line:"
	sed -n "${line},$((line + 40))p" "$log"
done
