#!/bin/sh
# usage: start.sh DIR PORT
#
# Start a real Ironic 21.4 (all-in-one process: API and conductor, fake
# hardware, noauth, no RPC bus) on 127.0.0.1:PORT for manual use and demos.
# The sqlite database lives on /dev/shm (tmpfs: node writes are about 1.5x
# faster than on disk). Writes DIR/ironic.conf, DIR/ironic.log and
# DIR/ironic.pid (the python PID), creates the schema (3-7 s), waits until
# the API answers (at most 60 s) and prints the URL. Stop with stop.sh DIR.
set -eu

if [ $# -ne 2 ]; then
	echo "usage: $0 DIR PORT" >&2
	exit 2
fi
dir=$1
port=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir/lock"
dir=$(cd "$dir" && pwd)

if [ -f "$dir/ironic.pid" ] && kill -0 "$(cat "$dir/ironic.pid")" 2>/dev/null; then
	echo "already running with PID $(cat "$dir/ironic.pid"); run stop.sh $dir first" >&2
	exit 1
fi

# One database per directory, so two instances never share one.
db=/dev/shm/ironic-$(echo "$dir" | md5sum | cut -c1-12).sqlite
rm -f "$db"
sed -e "s|@DIR@|$dir|g" -e "s|@PORT@|$port|g" -e "s|@DB@|$db|g" "$here/ironic.conf.in" > "$dir/ironic.conf"
echo "$db" > "$dir/ironic.db"

# Debian's modules import only under /usr/bin/python3 (the python3 on PATH
# may be another interpreter). python3-ironic ships no /usr/bin scripts, so
# the entry points are called as modules.
/usr/bin/python3 -c 'import sys; from ironic.cmd.dbsync import main; sys.exit(main())' \
	--config-file "$dir/ironic.conf" create_schema > "$dir/dbsync.log" 2>&1 || {
	echo "create_schema failed; see $dir/dbsync.log:" >&2
	tail -20 "$dir/dbsync.log" >&2
	exit 1
}

# No subshell, no setsid: $! must be the python process itself, or stop.sh
# would kill a shell and leave Ironic running.
nohup /usr/bin/python3 -c 'import sys; from ironic.cmd.singleprocess import main; sys.exit(main())' \
	--config-file "$dir/ironic.conf" > "$dir/ironic.log" 2>&1 &
echo $! > "$dir/ironic.pid"

url=http://127.0.0.1:$port
tries=0
until curl -sf -o /dev/null "$url/v1/nodes"; do
	if ! kill -0 "$(cat "$dir/ironic.pid")" 2>/dev/null; then
		echo "ironic exited; see $dir/ironic.log:" >&2
		tail -20 "$dir/ironic.log" >&2
		exit 1
	fi
	tries=$((tries + 1))
	if [ $tries -ge 300 ]; then
		echo "ironic not ready after 60 s; see $dir/ironic.log" >&2
		exit 1
	fi
	sleep 0.2
done
echo "$url"
