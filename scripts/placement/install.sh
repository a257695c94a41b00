#!/bin/sh
# Install the real OpenStack Placement 8.0 (Debian's python3-placement) if it
# is missing. Only the library package: it holds the whole service and asks
# no debconf questions; placement-api would add uwsgi, dbconfig and init
# scripts we do not use. Idempotent: does nothing when already installed.
set -eu

if /usr/bin/python3 -c 'import placement' 2>/dev/null; then
	echo "placement already installed"
	exit 0
fi
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-placement
/usr/bin/python3 -c 'import placement'
echo "placement installed"
