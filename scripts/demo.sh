#!/usr/bin/env bash
# make demo: run the engine with the fake plugin against a local real
# Placement, show what it wrote, run it again to show it writes nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .demo
url=${RPENGINE_PLACEMENT_URL:-http://127.0.0.1:8778}
started=""
if ! curl -sf -o /dev/null -H 'X-Auth-Token: admin' "$url/resource_providers"; then
	echo "== no Placement at $url: installing (if needed) and starting Debian's Placement 8.0"
	scripts/placement/install.sh
	scripts/placement/start.sh .demo/placement 8778
	url=http://127.0.0.1:8778
	started=yes
fi
trap '[ -n "$started" ] && scripts/placement/stop.sh .demo/placement' EXIT
sed "s#http://127.0.0.1:8778#$url#" config.toml > .demo/config.toml
sed -i 's#"build/plugins/#"../build/plugins/#; s#".demo/state.json"#"state.json"#' .demo/config.toml
rm -f .demo/state.json

echo
echo "== engine plan: what the first cycle would write (20 fake Ironic nodes, seed 42)"
bin/engine plan --config .demo/config.toml | tail -n 12
echo
echo "== engine once: reconcile (each write is logged with the generation before and after)"
bin/engine once --config .demo/config.toml 2> .demo/once.log
head -n 3 .demo/once.log
echo "... $(wc -l < .demo/once.log) log lines in all: .demo/once.log"
echo
echo "== what Placement now holds for this engine"
bin/engine show --config .demo/config.toml
echo
echo "== engine once again: nothing changed, so no writes (one Placement request)"
bin/engine once --config .demo/config.toml
