# Sourced by image-test.sh (with $mode, $tmp, $ref, $image, $tools set):
# runs the image's own command and health check, by podman or in the
# unpacked root ($tmp/root) as its user, with only a config mount.
#   in_image ARGS...  the image's binary with ARGS
#   daemon_test       the daemon: health check, a cycle, the cache on restart

# The image's environment, command and health check, as a runtime takes them.
mapfile -t imgenv < <(python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["Env"]))' "$tmp/config.json")
mapfile -t imgcmd < <(python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); print("\n".join(c["Entrypoint"]+c["Cmd"]))' "$tmp/config.json")
mapfile -t imghealth < <(python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["Healthcheck"]["Test"][1:]))' "$tmp/config.json")

in_image() {
	case $mode in
	podman) podman run --rm --network none --ulimit host "$ref" "$@" ;;
	chroot) env -i "${imgenv[@]}" /usr/sbin/chroot --userspec=65532:65532 "$tmp/root" /usr/bin/rpengine "$@" ;;
	*) "$tmp/root/usr/bin/rpengine" "$@" ;;
	esac
}

# health runs the image's health check (a ready check with "ready").
health() {
	local cmd=("${imghealth[@]}")
	[ "${1:-}" = ready ] && cmd=("${cmd[@]/live/ready}")
	case $mode in
	podman) podman exec "$ctr" "${cmd[@]}" ;;
	chroot) env -i "${imgenv[@]}" /usr/sbin/chroot --userspec=65532:65532 "$tmp/root" "${cmd[@]}" ;;
	esac
}

start_daemon() {
	case $mode in
	podman)
		if [ -z "${ctr:-}" ]; then
			ctr=rpengine-image-test-$$
			podman run -d --name "$ctr" --network host --ulimit host -v "$tmp/etc:/etc/rpengine:ro" "$ref" >/dev/null
		else
			podman start "$ctr" >/dev/null
		fi ;;
	chroot)
		env -i "${imgenv[@]}" /usr/sbin/chroot --userspec=65532:65532 "$tmp/root" "${imgcmd[@]}" >>"$tmp/engine.log" 2>&1 &
		daemon=$! ;;
	esac
}

stop_daemon() {
	case $mode in
	podman) podman stop -t 70 "$ctr" >/dev/null ;;
	chroot) kill -TERM "$daemon" && wait "$daemon" || true ;;
	esac
}

# cache lists the compiled-plugin cache volume's files with size and mtime.
cache() {
	local dir=$tmp/root/var/cache/rpengine
	[ "$mode" = podman ] && dir=$(podman inspect -f '{{range .Mounts}}{{if eq .Destination "/var/cache/rpengine"}}{{.Source}}{{end}}{{end}}' "$ctr")
	find "$dir" -type f -printf '%P %s %T@\n' | sort
}

# wait_ready waits (at most 120 s: the first start compiles the plugin)
# until the image's health check says ready, i.e. a cycle succeeded.
wait_ready() {
	local i
	for i in $(seq 120); do
		health ready >/dev/null 2>&1 && return 0
		sleep 1
	done
	echo "image-test: the daemon was not ready after 120 s; its log:"
	if [ "$mode" = podman ]; then podman logs "$ctr" | tail -n 30; else tail -n 30 "$tmp/engine.log"; fi
	return 1
}

write_config() {
	mkdir -p "$tmp/etc"
	port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	# The image's default config, with a local Placement (noauth2) and the
	# fake plugin instead of Keystone and Ironic; listen, cache and state
	# stay the image's.
	sed -e '/^\[auth\]/,/^$/c\[auth]\nmethod = "noauth"\n' \
		-e "s#^\[placement\].*#[placement]\nendpoint = \"$placement\"\ntoken = \"admin\"#" \
		-e 's#/usr/lib/rpengine/ironic.wasm#/usr/lib/rpengine/fake.wasm#' \
		-e '/^\[plugin.services\]/,/^$/d' \
		-e 's#^page_size = 1000#nodes = 20\nseed = 42\nresource_classes = ["baremetal-gold"]#' \
		-e "s#0.0.0.0:9180#0.0.0.0:$port#" \
		-e 's#^interval = .*#interval = "5s"#' \
		"$tmp/root/etc/rpengine/rpengine.toml" > "$tmp/etc/rpengine.toml"
	chmod 0755 "$tmp/etc" && chmod 0644 "$tmp/etc/rpengine.toml"
	if [ "$mode" = chroot ]; then
		mount --bind -o ro "$tmp/etc" "$tmp/root/etc/rpengine"
	fi
}

daemon_test() {
	if [ "$mode" = direct ]; then
		echo "image-test: not root and no podman: the daemon test (health check, cycle, cache) NOT run"
		return 0
	fi
	placement=$(scripts/placement/start.sh "$tmp/placement" 0 | tail -n 1)
	write_config
	start_daemon
	wait_ready
	local t0 t1 ms
	t0=$(date +%s%N)
	health >/dev/null || { echo "image-test: the image's health check failed on a ready daemon"; exit 1; }
	t1=$(date +%s%N)
	ms=$(((t1 - t0) / 1000000))
	[ "$ms" -lt 5000 ] || { echo "image-test: the health check took ${ms} ms (want < 5 s)"; exit 1; }
	echo "image-test: health check (${imghealth[*]}) answered in ${ms} ms"
	local n
	n=$(curl -sf -H 'X-Auth-Token: admin' -H 'OpenStack-API-Version: placement 1.39' "$placement/resource_providers" |
		python3 -c 'import json,sys; print(len(json.load(sys.stdin)["resource_providers"]))')
	[ "$n" -ge 20 ] || { echo "image-test: Placement has $n providers after a cycle, want 20"; exit 1; }
	local metrics
	metrics=$(curl -sf "http://127.0.0.1:$port/metrics")
	grep -q '^rpengine_cycles_total' <<<"$metrics" || { echo "image-test: no rpengine_cycles_total on :$port/metrics"; exit 1; }
	echo "image-test: a cycle wrote $n providers to the real Placement at $placement; /metrics answers on 0.0.0.0:$port"
	stop_daemon
	cache > "$tmp/cache1"
	[ -s "$tmp/cache1" ] || { echo "image-test: the first start left the plugin cache volume empty"; exit 1; }
	start_daemon
	wait_ready
	stop_daemon
	cache > "$tmp/cache2"
	if ! cmp -s "$tmp/cache1" "$tmp/cache2"; then
		echo "image-test: the second start changed the plugin cache (it compiled again):"
		diff "$tmp/cache1" "$tmp/cache2" || true
		exit 1
	fi
	echo "image-test: the second start compiled nothing ($(wc -l <"$tmp/cache1") cache files unchanged)"
}
