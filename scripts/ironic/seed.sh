#!/bin/sh
# usage: seed.sh URL
#
# Enroll a small demo fleet in the (fake-hardware) Ironic at URL, in the
# states the engine treats differently: available and powered (free),
# available with power unknown, active with an instance, maintenance,
# manageable, enroll; three resource classes, two shards, some traits.
# Idempotent: nodes whose name exists are left alone.
set -eu

if [ $# -ne 1 ]; then
	echo "usage: $0 URL" >&2
	exit 2
fi
url=$1
ver='X-OpenStack-Ironic-API-Version: 1.82'
json='Content-Type: application/json'

api() { # METHOD PATH [BODY]
	if [ $# -eq 3 ]; then
		curl -sf -X "$1" -H "$ver" -H "$json" "$url$2" -d "$3"
	else
		curl -sf -X "$1" -H "$ver" "$url$2"
	fi
}

field() { # NAME FIELD: one field of a node, "None" for null
	api GET "/v1/nodes/$1?fields=$2" | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"
}

wait_for() { # NAME FIELD VALUE
	i=0
	until [ "$(field "$1" "$2")" = "$3" ]; do
		i=$((i + 1))
		if [ $i -ge 300 ]; then
			echo "node $1: $2 is not $3 after 60 s" >&2
			exit 1
		fi
		sleep 0.2
	done
}

provision() { # NAME TARGET STATE
	api PUT "/v1/nodes/$1/states/provision" "{\"target\": \"$2\"}" > /dev/null
	wait_for "$1" provision_state "$3"
}

node() { # NAME CLASS SHARD STATE [TRAITS-JSON]
	name=$1 class=$2 shard=$3 state=$4 traits=${5:-}
	if api GET "/v1/nodes/$name?fields=uuid" > /dev/null 2>&1; then
		return
	fi
	api POST /v1/nodes "{\"name\": \"$name\", \"driver\": \"fake-hardware\", \"resource_class\": \"$class\", \"shard\": \"$shard\"}" > /dev/null
	[ -n "$traits" ] && api PUT "/v1/nodes/$name/traits" "{\"traits\": $traits}" > /dev/null
	[ "$state" = enroll ] && return
	provision "$name" manage manageable
	[ "$state" = manageable ] && return
	provision "$name" provide available
	[ "$state" = unpowered ] && return
	api PUT "/v1/nodes/$name/states/power" '{"target": "power on"}' > /dev/null
	wait_for "$name" power_state "power on"
	case $state in
	maintenance)
		api PUT "/v1/nodes/$name/maintenance" '{"reason": "demo"}' > /dev/null ;;
	active)
		api PATCH "/v1/nodes/$name" "[{\"op\": \"add\", \"path\": \"/instance_uuid\", \"value\": \"$(cat /proc/sys/kernel/random/uuid)\"}]" > /dev/null
		provision "$name" active active ;;
	esac
}

node demo-gold-1 baremetal-gold shard-a available '["CUSTOM_GOLD", "HW_CPU_X86_AVX2"]'
node demo-gold-2 baremetal-gold shard-a active '["CUSTOM_GOLD"]'
node demo-gold-3 baremetal-gold shard-b maintenance
node demo-silver-1 baremetal.silver shard-b available
node demo-silver-2 baremetal.silver shard-b unpowered
node demo-silver-3 baremetal.silver shard-a manageable
node demo-gpu-1 gpu_a100 shard-a available '["CUSTOM_GPU_A100"]'
node demo-gpu-2 gpu_a100 shard-b enroll
echo "seeded: $(api GET '/v1/nodes?fields=uuid' | /usr/bin/python3 -c 'import json,sys; print(len(json.load(sys.stdin)["nodes"]))') nodes in $url"
