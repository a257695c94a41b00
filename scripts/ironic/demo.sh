#!/usr/bin/env bash
# The demo against a local real Ironic instead of the fake plugin: starts
# Debian's Ironic 21.4 (fake hardware) and Placement 8.0 on loopback when
# they are not already running, seeds a small fleet (seed.sh), runs the
# engine with build/plugins/ironic.wasm, changes a node in Ironic and runs
# it again. Run it from `make` after `make build plugins`, or directly.
#
# RPENGINE_IRONIC_URL / RPENGINE_PLACEMENT_URL use running services
# instead (the Ironic must accept noauth requests); otherwise the demo
# starts its own Placement on a free port (scripts/placement/demo-lib.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .demo
here=scripts/ironic

. scripts/placement/demo-lib.sh
ironic=${RPENGINE_IRONIC_URL:-http://127.0.0.1:6385}
started_p="" started_i=""
cleanup() {
	[ -n "$started_i" ] && $here/stop.sh .demo/ironic
	[ -n "$started_p" ] && scripts/placement/stop.sh .demo/placement-ironic
	true
}
trap cleanup EXIT
demo_placement .demo/placement-ironic
if ! curl -sf -o /dev/null "$ironic/v1/nodes"; then
	echo "== no Ironic at $ironic: installing (if needed) and starting Debian's Ironic 21.4"
	$here/install.sh
	$here/start.sh .demo/ironic 6385
	ironic=http://127.0.0.1:6385 started_i=yes
fi
$here/seed.sh "$ironic"

cat > .demo/ironic.toml <<CONF
[engine]
id = "demo-ironic"
state_file = "ironic-state.json"
delete_grace = "0s"

[scope]                   # shard-a, shard-b and unsharded nodes
shards = ["shard-a", "shard-b", ""]

[provider]
marker_traits = ["COMPUTE_NODE"]

[auth]
method = "noauth"

[placement]
endpoint = "$placement"
token = "admin"

[plugin]
path = "../build/plugins/ironic.wasm"

[plugin.services]         # what the plugin may reach; the host adds any token
baremetal = "$ironic"

[plugin.config]
page_size = 1000
CONF
rm -f .demo/ironic-state.json

echo
echo "== engine plan: what the first cycle would write"
bin/engine plan --config .demo/ironic.toml | tail -n 14
echo
echo "== engine once: reconcile the Ironic nodes into Placement"
bin/engine once --config .demo/ironic.toml
echo
echo "== what Placement now holds for this engine"
bin/engine show --config .demo/ironic.toml
echo
echo "== demo-gold-1 goes into maintenance in Ironic; the next cycle reserves it"
curl -sf -X PUT -H 'X-OpenStack-Ironic-API-Version: 1.82' -H 'Content-Type: application/json' \
	"$ironic/v1/nodes/demo-gold-1/maintenance" -d '{"reason": "demo"}'
bin/engine once --config .demo/ironic.toml
curl -sf -X DELETE -H 'X-OpenStack-Ironic-API-Version: 1.82' "$ironic/v1/nodes/demo-gold-1/maintenance"
