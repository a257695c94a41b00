#!/bin/sh
# Install the real OpenStack Ironic 21.4 (Debian's python3-ironic) if it is
# missing. Only the library package: it holds the whole service (the
# all-in-one `ironic` entry point included) and asks no debconf questions;
# ironic-api/ironic-conductor would add uwsgi, dbconfig, rabbit questions
# and PXE tooling we do not use. Idempotent: does nothing when installed.
set -eu

if /usr/bin/python3 -c 'import ironic' 2>/dev/null; then
	echo "ironic already installed"
	exit 0
fi
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-ironic
/usr/bin/python3 -c 'import ironic'
echo "ironic installed"
