#!/usr/bin/env bash
# The demo with the VMware plugin: starts govmomi's vCenter simulator
# (vcsim, built by install.sh at go.mod's govmomi version; 4 clusters of 8
# hosts, 8 datastores) on 127.0.0.1 and Debian's Placement 8.0 when none
# is running, runs the engine with build/plugins/vmware.wasm, shows the
# providers, then puts a host into maintenance and runs it again. The
# engine logs in to vCenter itself; the plugin never sees the password or
# the session. Run it from `make demo-vmware`, or directly after
# `make build plugins`.
#
# RPENGINE_PLACEMENT_URL uses a running Placement instead; otherwise the
# demo starts its own on a free port (scripts/placement/demo-lib.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .demo
here=scripts/vcsim

. scripts/placement/demo-lib.sh
port=${RPENGINE_VCSIM_PORT:-18989}
started_p="" vcsim_pid=""
cleanup() {
	[ -n "$vcsim_pid" ] && kill "$vcsim_pid" 2>/dev/null && wait "$vcsim_pid" 2>/dev/null
	[ -n "$started_p" ] && scripts/placement/stop.sh .demo/placement-vmware
	true
}
trap cleanup EXIT
demo_placement .demo/placement-vmware

$here/install.sh
version=$(go list -m -f '{{.Version}}' github.com/vmware/govmomi)
vcsim=${RPENGINE_VCSIM:-${RPENGINE_VCSIM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rpengine/vcsim-$version}/vcsim}
echo "== starting vcsim $version on 127.0.0.1:$port: 4 clusters x 8 hosts, 8 datastores"
"$vcsim" -l "127.0.0.1:$port" -tls=false -username demo -password demo-secret \
	-cluster 4 -host 8 -ds 8 -vm 0 -standalone-host 0 -pg 0 -E /dev/null >.demo/vcsim.log 2>&1 &
vcsim_pid=$!
for _ in $(seq 100); do
	curl -sf -o /dev/null "http://127.0.0.1:$port/about" && break
	sleep 0.1
done
printf 'demo-secret\n' >.demo/vcsim.pw
chmod 600 .demo/vcsim.pw

cat > .demo/vmware.toml <<CONF
[engine]
id = "demo-vmware"
state_file = "vmware-state.json"
delete_grace = "0s"

[provider]
marker_traits = ["COMPUTE_NODE"]

[auth]
method = "noauth"

[placement]
endpoint = "$placement"
token = "admin"

[plugin]
path = "../build/plugins/vmware.wasm"

[plugin.services]         # the engine logs in; the plugin only names "vcenter"
vcenter = { url = "http://127.0.0.1:$port", auth = "vcenter", user = "demo", password_file = "vcsim.pw" }

[plugin.config]
datastore_types = ["VMFS", "NFS", "NFS41", "vsan", "OTHER"]   # vcsim's local datastores are OTHER
cpu_allocation_ratio = 4.0
ram_allocation_ratio = 1.0
reserved_host_memory_mb = 512
CONF
rm -f .demo/vmware-state.json

echo
echo "== engine plugin inspect"
bin/engine plugin inspect build/plugins/vmware.wasm
echo
echo "== engine once: one provider per cluster"
bin/engine once --config .demo/vmware.toml
echo
echo "== what Placement now holds for this engine"
bin/engine show --config .demo/vmware.toml
echo
echo "== a host of the first cluster goes into maintenance; the next cycle lowers its VCPU and MEMORY_MB"
go run ./scripts/vcsim/maintenance "http://demo:demo-secret@127.0.0.1:$port/sdk"
bin/engine once --config .demo/vmware.toml
bin/engine show --config .demo/vmware.toml
