#!/bin/sh
# usage: stop.sh DIR
#
# Stop the Ironic that start.sh started in DIR, by the PID it recorded, and
# remove its /dev/shm database.
set -eu

if [ $# -ne 1 ]; then
	echo "usage: $0 DIR" >&2
	exit 2
fi
dir=$1
if [ ! -f "$dir/ironic.pid" ]; then
	echo "no $dir/ironic.pid: nothing to stop" >&2
	exit 0
fi
pid=$(cat "$dir/ironic.pid")
if kill -0 "$pid" 2>/dev/null; then
	kill -TERM "$pid"
	# The conductor stops cleanly in about 2.5 s; give it 15 s before SIGKILL.
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 75 ]; do
		sleep 0.2
		i=$((i + 1))
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid"
	fi
fi
rm -f "$dir/ironic.pid"
if [ -f "$dir/ironic.db" ]; then
	rm -f "$(cat "$dir/ironic.db")" "$dir/ironic.db"
fi
echo "stopped $pid"
