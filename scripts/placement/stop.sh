#!/bin/sh
# usage: stop.sh DIR
#
# Stop the Placement that start.sh started in DIR, by the PID it recorded
# (its database, DIR/placement.sqlite, stays until DIR is removed).
set -eu

if [ $# -ne 1 ]; then
	echo "usage: $0 DIR" >&2
	exit 2
fi
dir=$1
if [ ! -f "$dir/api.pid" ]; then
	echo "no $dir/api.pid: nothing to stop" >&2
	exit 0
fi
pid=$(cat "$dir/api.pid")
if kill -0 "$pid" 2>/dev/null; then
	kill -TERM "$pid"
	# serve.py exits at once on SIGTERM; give it 5 s before SIGKILL.
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 25 ]; do
		sleep 0.2
		i=$((i + 1))
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid"
	fi
fi
rm -f "$dir/api.pid"
echo "stopped $pid"
