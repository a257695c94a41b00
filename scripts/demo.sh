#!/usr/bin/env bash
# make demo: run the engine with the fake plugin against the demo's own
# real Placement, show what it wrote, run it again to show it writes
# nothing, then leave Placement and `engine run` (the daemon, with its
# status page) running so that the README's next commands work, and say
# how to stop them. `scripts/demo.sh stop` (or `make demo-stop`) stops what
# it started; `scripts/demo.sh stop-daemon` stops only the daemon, which
# holds the demo's state file.
#
# The demo writes only into a Placement it started (on a free port) or
# was pointed at (RPENGINE_PLACEMENT_URL), and its status page takes a
# free port (printed). RPENGINE_DEMO_DIR (default .demo) holds all of one
# demo: two demos with two directories run side by side.
# RPENGINE_DEMO_KEEP=0 stops everything at the end instead (CI).
# RPENGINE_ENGINE_BIN and RPENGINE_FAKE_PLUGIN name another binary and
# fake.wasm than make's (the e2e test of two demos side by side).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/placement/demo-lib.sh
demo=${RPENGINE_DEMO_DIR:-.demo}
mkdir -p "$demo"
demo=$(cd "$demo" && pwd)
here=$(pwd)
engine=${RPENGINE_ENGINE_BIN:-$here/bin/engine}
fake=${RPENGINE_FAKE_PLUGIN:-$here/build/plugins/fake.wasm}

stop_daemon() {
	if [ -f "$demo/engine.pid" ] && kill -0 "$(cat "$demo/engine.pid")" 2>/dev/null; then
		kill -TERM "$(cat "$demo/engine.pid")"
		for _ in $(seq 1 50); do kill -0 "$(cat "$demo/engine.pid")" 2>/dev/null || break; sleep 0.2; done
		echo "stopped engine run (PID $(cat "$demo/engine.pid"))"
	fi
	rm -f "$demo/engine.pid"
}
stop_demo() {
	stop_daemon
	if [ -f "$demo/placement/api.pid" ]; then
		scripts/placement/stop.sh "$demo/placement"
		echo "stopped the demo's Placement"
	fi
}
case "${1:-}" in
stop) stop_demo; exit 0 ;;
stop-daemon) stop_daemon; exit 0 ;;
esac
stop_daemon >/dev/null 2>&1 || true # a previous demo's daemon holds the state file

demo_placement "$demo/placement"
url=$placement started=$started_p
listen=127.0.0.1:$(free_port)
# On a failure before the daemon runs, stop the Placement this run started.
trap '[ -n "$started" ] && scripts/placement/stop.sh "$demo/placement"' EXIT
sed "s#http://127.0.0.1:8778#$url#; s#127.0.0.1:9180#$listen#; s#\"build/plugins/fake.wasm\"#\"$fake\"#; s#\".demo/state.json\"#\"$demo/state.json\"#" \
	config.toml > "$demo/config.toml"
rm -f "$demo/state.json"

echo
echo "== engine plan: what the first cycle would write (20 fake Ironic nodes, seed 42)"
"$engine" plan --config "$demo/config.toml" | tail -n 12
echo
echo "== engine once: reconcile (each write is logged with the generation before and after)"
"$engine" once --config "$demo/config.toml" 2> "$demo/once.log"
head -n 3 "$demo/once.log"
echo "... $(wc -l < "$demo/once.log") log lines in all: $demo/once.log"
echo
echo "== what Placement now holds for this engine"
"$engine" show --config "$demo/config.toml"
echo
echo "== engine once again: nothing changed, so no writes (one Placement request)"
"$engine" once --config "$demo/config.toml"

if [ "${RPENGINE_DEMO_KEEP:-1}" = 0 ]; then
	exit 0 # the EXIT trap stops the Placement this run started
fi
echo
# The status page's port, free when asked, can be taken before the
# daemon binds it (another demo starting at the same moment): then the
# daemon exits and another port is tried.
start_daemon() {
	listen=127.0.0.1:$(free_port)
	sed -i "s#^listen = .*#listen = \"$listen\"#" "$demo/config.toml"
	setsid "$engine" run --config "$demo/config.toml" > "$demo/run.log" 2>&1 < /dev/null &
	echo $! > "$demo/engine.pid"
	for _ in $(seq 1 100); do
		curl -sf -o /dev/null "http://$listen/readyz" && return 0
		kill -0 "$(cat "$demo/engine.pid")" 2>/dev/null || return 1
		sleep 0.2
	done
	echo "engine run is not ready after 20 s:"; tail -n 20 "$demo/run.log"; exit 1
}
for try in 1 2 3; do
	start_daemon && break
	echo "engine run exited (try $try of 3):"; tail -n 5 "$demo/run.log"
	[ "$try" = 3 ] && exit 1
done
echo
echo "== engine run: the daemon, every 60 s, with its status page and metrics on $listen"
trap - EXIT # from here on the demo stays up
echo "$listen" > "$demo/listen"
cfg=$demo/config.toml
cat <<MSG

The demo is running:
  status page   http://$listen/            (the node table, the last cycles, drift)
  metrics       http://$listen/metrics
  the daemon    PID $(cat "$demo/engine.pid"), log $demo/run.log
  config        $cfg
  Placement     $url$([ -n "$started" ] && echo " (started by the demo, log $demo/placement/api.log)")

While the daemon runs:
     bin/engine show --config $cfg
     bin/engine plan --config $cfg     (the daemon plans it: its API on $listen)
     bin/engine explain NODE --config $cfg
     bin/engine audit --config $cfg    (reads the daemon's state without its lock)
     curl -s -X POST http://$listen/api/v1/cycle   (a cycle now)
     curl -s http://$listen/metrics | grep '^rpengine_cycles_total'
The daemon holds the state file ($demo/state.json); for once and run by
hand with that config, stop it and keep Placement:
     scripts/demo.sh stop-daemon
Stop it all: make demo-stop   (or scripts/demo.sh stop)
MSG
