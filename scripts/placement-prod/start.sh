#!/bin/sh
# usage: start.sh DIR PORT [WORKERS]
#
# Start a production-shaped Placement on 127.0.0.1:PORT for the bench:
# a private MariaDB (its own datadir and unix socket under DIR, no TCP,
# Debian's defaults otherwise: InnoDB, flush at every commit) and uWSGI
# with WORKERS (default 4) single-threaded worker processes, as Debian's
# placement-api under uwsgi or mod_wsgi runs it; HTTP/1.1 keep-alive (a
# plain --http-socket closes each connection, which a client reusing it
# sees as a reset). noauth2 (token "admin").
# Prints the URL when Placement answers. Stop it with stop.sh DIR.
set -eu

if [ $# -lt 2 ]; then
	echo "usage: $0 DIR PORT [WORKERS]" >&2
	exit 2
fi
dir=$1
port=$2
workers=${3:-4}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
sock=$dir/mysql.sock
user=$(id -un)

if [ -f "$dir/uwsgi.pid" ] && kill -0 "$(cat "$dir/uwsgi.pid")" 2>/dev/null; then
	echo "already running; run stop.sh $dir first" >&2
	exit 1
fi

# MariaDB: a fresh datadir each start.
rm -rf "$dir/db"
mariadb-install-db --no-defaults --datadir="$dir/db" --user="$user" \
	--auth-root-authentication-method=socket --skip-test-db > "$dir/mariadb-install.log" 2>&1
nohup mariadbd --no-defaults --datadir="$dir/db" --socket="$sock" --skip-networking \
	--pid-file="$dir/mariadb.pid" --user="$user" --character-set-server=utf8mb4 \
	--collation-server=utf8mb4_general_ci --log-error="$dir/mariadb.err" > /dev/null 2>&1 &
tries=0
until mariadb --no-defaults --socket="$sock" -u "$user" -e 'select 1' > /dev/null 2>&1; do
	tries=$((tries + 1))
	if [ $tries -ge 300 ]; then
		echo "mariadb not ready after 60 s; see $dir/mariadb.err" >&2
		tail -20 "$dir/mariadb.err" >&2 || true
		exit 1
	fi
	sleep 0.2
done
mariadb --no-defaults --socket="$sock" -u "$user" -e 'CREATE DATABASE placement'

cat > "$dir/placement.conf" <<CONF
[api]
auth_strategy = noauth2

[placement_database]
connection = mysql+pymysql://$user@localhost/placement?unix_socket=$sock&charset=utf8
CONF
placement-manage --config-file "$dir/placement.conf" db sync > "$dir/dbsync.log" 2>&1

OS_PLACEMENT_CONFIG_DIR=$dir uwsgi --plugin python3 --master --lazy-apps --die-on-term \
	--processes "$workers" --threads 1 --http11-socket "127.0.0.1:$port" --listen 100 \
	--wsgi-file "$here/app.py" --pidfile "$dir/uwsgi.pid" --daemonize "$dir/uwsgi.log" \
	--disable-logging

url=http://127.0.0.1:$port
tries=0
until curl -sf -o /dev/null -H 'X-Auth-Token: admin' "$url/resource_providers"; do
	tries=$((tries + 1))
	if [ $tries -ge 300 ]; then
		echo "placement not ready after 60 s; see $dir/uwsgi.log" >&2
		tail -20 "$dir/uwsgi.log" >&2 || true
		exit 1
	fi
	sleep 0.2
done
echo "$url"
