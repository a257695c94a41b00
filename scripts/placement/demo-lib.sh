# Sourced by the demos (bash): demo_placement DIR sets $placement (the URL
# the demo writes to) and $started_p ("yes" when this run started it, so
# the demo stops it on failure). The rule: a demo writes only into a
# Placement it started or was pointed at.
#   - RPENGINE_PLACEMENT_URL set: that one, which must answer (token admin).
#   - DIR/api.pid alive: the Placement a previous run of this demo started
#     in DIR (its URL in DIR/url).
#   - Otherwise: a new one in DIR on a free port (never 8778's tenant,
#     whoever that is).

demo_placement() {
	local dir=$1
	started_p=""
	if [ -n "${RPENGINE_PLACEMENT_URL:-}" ]; then
		placement=${RPENGINE_PLACEMENT_URL%/}
		if ! curl -sf -o /dev/null -H 'X-Auth-Token: admin' "$placement/resource_providers"; then
			echo "RPENGINE_PLACEMENT_URL=$placement does not answer GET /resource_providers with token admin" >&2
			return 1
		fi
		echo "== using the Placement at $placement (RPENGINE_PLACEMENT_URL)"
		return 0
	fi
	if [ -f "$dir/api.pid" ] && [ -f "$dir/url" ] && kill -0 "$(cat "$dir/api.pid")" 2>/dev/null &&
		curl -sf -o /dev/null -H 'X-Auth-Token: admin' "$(cat "$dir/url")/resource_providers"; then
		placement=$(cat "$dir/url")
		echo "== using the Placement this demo started before, at $placement ($dir)"
		return 0
	fi
	echo "== starting the demo's own Placement 8.0 (Debian's; installed if needed) on a free port"
	scripts/placement/install.sh
	# A free port can be taken between the asking and serve.py's bind
	# (another demo starting at the same moment): then try another.
	local try
	for try in 1 2 3; do
		if placement=$(scripts/placement/start.sh "$dir" 0 | tail -n 1); then
			started_p=yes
			return 0
		fi
		echo "== Placement did not start (try $try of 3)" >&2
	done
	return 1
}

# free_port prints a loopback TCP port free at the time of asking.
free_port() {
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
