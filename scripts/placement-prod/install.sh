#!/bin/sh
# Install what the production-shaped Placement of the bench needs, from
# Debian: uWSGI with its python3 plugin (several worker processes) and
# MariaDB (with PyMySQL, the driver Placement's SQLAlchemy URL names).
# Placement itself comes from scripts/placement/install.sh. Idempotent.
set -eu

if command -v uwsgi >/dev/null && [ -e /usr/lib/uwsgi/plugins/python3_plugin.so ] &&
	command -v mariadbd >/dev/null && /usr/bin/python3 -c 'import pymysql' 2>/dev/null; then
	echo "placement-prod deps already installed"
	exit 0
fi
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends \
	uwsgi-core uwsgi-plugin-python3 mariadb-server python3-pymysql
echo "placement-prod deps installed"
