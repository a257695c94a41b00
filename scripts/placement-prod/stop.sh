#!/bin/sh
# usage: stop.sh DIR — stop what start.sh DIR started (uWSGI, then
# MariaDB) and remove the database. Safe to call twice.
set -u
dir=$1
stop() {
	[ -f "$1" ] || return 0
	pid=$(cat "$1")
	kill "$pid" 2>/dev/null || { rm -f "$1"; return 0; }
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -9 "$pid" 2>/dev/null || true
	rm -f "$1"
}
stop "$dir/uwsgi.pid"
stop "$dir/mariadb.pid"
rm -rf "$dir/db"
