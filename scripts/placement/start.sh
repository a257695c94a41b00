#!/bin/sh
# usage: start.sh DIR PORT
#
# Start a real Placement on 127.0.0.1:PORT for manual use and demos:
# noauth2 (token "admin"), sqlite on /dev/shm (tmpfs: about 3x faster than
# a disk file), schema created at startup. Writes DIR/placement.conf,
# DIR/api.log and DIR/api.pid (the python PID), waits until it answers
# (at most 60 s) and prints the URL. Stop it with stop.sh DIR.
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

if [ -f "$dir/api.pid" ] && kill -0 "$(cat "$dir/api.pid")" 2>/dev/null; then
	echo "already running with PID $(cat "$dir/api.pid"); run stop.sh $dir first" >&2
	exit 1
fi

# One database per directory, so two instances never share one.
db=/dev/shm/placement-$(echo "$dir" | md5sum | cut -c1-12).sqlite
rm -f "$db"
cat > "$dir/placement.conf" <<CONF
[api]
auth_strategy = noauth2

[placement_database]
connection = sqlite:///$db
sync_on_startup = true
CONF

# No subshell, no setsid: \$! must be the python process itself, or stop.sh
# would kill a shell and leave Placement running.
OS_PLACEMENT_CONFIG_DIR=$dir nohup /usr/bin/python3 "$here/serve.py" "$port" > "$dir/api.log" 2>&1 &
echo $! > "$dir/api.pid"
echo "$db" > "$dir/api.db"

url=http://127.0.0.1:$port
tries=0
until curl -sf -o /dev/null -H 'X-Auth-Token: admin' "$url/resource_providers"; do
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
echo "$url"
