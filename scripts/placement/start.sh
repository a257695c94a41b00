#!/bin/sh
# usage: start.sh DIR PORT
#
# Start a real Placement on 127.0.0.1:PORT (0: a free port) for the demos and the release
# tests, configured as the Go tests and the bench start theirs
# (placement.conf: noauth2, token "admin", the sqlite file
# DIR/placement.sqlite, kept while DIR is: restarting in the same DIR keeps
# the data; remove the file for an empty one). Writes
# DIR/placement.conf, DIR/api.log, DIR/api.pid (the python PID) and
# DIR/url, waits until it answers (at most 60 s) and prints the URL. Stop it with
# stop.sh DIR.
set -eu

if [ $# -ne 2 ]; then
	echo "usage: $0 DIR PORT" >&2
	exit 2
fi
dir=$1
port=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if [ "$port" = 0 ]; then
	# Free now; another process could take it before serve.py binds, and
	# then serve.py exits and this script says so.
	port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fi

if [ -f "$dir/api.pid" ] && kill -0 "$(cat "$dir/api.pid")" 2>/dev/null; then
	echo "already running with PID $(cat "$dir/api.pid"); run stop.sh $dir first" >&2
	exit 1
fi

# The database is DIR's own (placement.conf names it relative to the
# working directory): two instances never share one.
cp "$here/placement.conf" "$dir/placement.conf"
cd "$dir"

# No subshell, no setsid: \$! must be the python process itself, or stop.sh
# would kill a shell and leave Placement running.
OS_PLACEMENT_CONFIG_DIR=$dir nohup /usr/bin/python3 "$here/serve.py" "$port" > "$dir/api.log" 2>&1 &
echo $! > "$dir/api.pid"

url=http://127.0.0.1:$port
tries=0
# Ready once serve.py says it bound the port itself (another Placement
# that took the port first would answer the curl too, and a demo would
# write into it) and it answers.
until grep -q "placement listening on 127.0.0.1:$port" "$dir/api.log" &&
	curl -sf -o /dev/null -H 'X-Auth-Token: admin' "$url/resource_providers"; do
	if ! kill -0 "$(cat "$dir/api.pid")" 2>/dev/null; then
		echo "placement exited; see $dir/api.log:" >&2
		tail -20 "$dir/api.log" >&2
		exit 1
	fi
	tries=$((tries + 1))
	if [ $tries -ge 300 ]; then
		echo "placement not ready after 60 s; see $dir/api.log" >&2
		exit 1
	fi
	sleep 0.2
done
echo "$url" > "$dir/url"
echo "$url"
