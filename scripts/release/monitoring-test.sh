#!/usr/bin/env bash
# make monitoring-test: the Prometheus rules parse and their unit tests
# pass (promtool, from Debian's prometheus package), and every rpengine_*
# series the rules and the Grafana dashboard read is one the engine
# registers (internal/ops), so a renamed metric cannot leave a dead alert.
set -euo pipefail
cd "$(dirname "$0")/../.."
mon=deploy/monitoring
command -v promtool >/dev/null || { echo "monitoring-test: no promtool (scripts/release/install.sh installs it)"; exit 1; }
promtool check rules $mon/rpengine.rules.yml
(cd $mon && promtool test rules rpengine.rules.test.yml)
python3 -m json.tool $mon/rpengine-dashboard.json >/dev/null
registered=$( {
	grep -rhoE 'Name: +"rpengine_[a-z0-9_]+"' internal/ops/*.go internal/events/*.go cmd/engine/*.go | grep -oE 'rpengine_[a-z0-9_]+'
	grep -hoE '\bc\("[a-z0-9_]+"' internal/events/metrics.go | sed -E 's/^c\("/rpengine_events_/; s/"$//' # c(...) prefixes rpengine_events_
} | sort -u)
used=$(grep -hoE 'rpengine_[a-z0-9_]+' $mon/rpengine.rules.yml $mon/rpengine-dashboard.json | sed -E 's/_(bucket|count|sum)$//' | sort -u)
missing=$(comm -13 <(echo "$registered") <(echo "$used"))
if [ -n "$missing" ]; then
	echo "monitoring-test: the rules or the dashboard read series the engine does not register:"
	echo "$missing"
	exit 1
fi
echo "monitoring-test: rules checked and tested; $(echo "$used" | wc -l) rpengine series used, all registered"
