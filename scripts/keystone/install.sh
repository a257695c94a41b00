#!/bin/sh
# Install the real OpenStack Keystone 22 (Debian's python3-keystone) if it is
# missing. Only the library package: it holds the whole service and asks no
# debconf questions; the keystone package would add apache2, dbconfig and
# init scripts we do not use. Idempotent: does nothing when already installed.
set -eu

if /usr/bin/python3 -c 'import keystone.server.wsgi' 2>/dev/null; then
	echo "keystone already installed"
	exit 0
fi
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-keystone
/usr/bin/python3 -c 'import keystone.server.wsgi'
echo "keystone installed"
