#!/bin/sh
# Install the real nova 26.2.2 (Debian's python3-nova) and python3-ironicclient
# for the beside-nova end-to-end test (e2e/nova_test.go), which drives nova's
# own ComputeManager with the Ironic driver (scripts/nova/driver.py). Only the
# library packages: no nova-compute service, no debconf questions.
# Idempotent: does nothing when installed.
set -eu

if /usr/bin/python3 -c 'import nova.virt.ironic.driver, ironicclient' 2>/dev/null; then
	echo "nova already installed"
	exit 0
fi
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends python3-nova python3-ironicclient
/usr/bin/python3 -c 'import nova.virt.ironic.driver, ironicclient'
echo "nova installed"
