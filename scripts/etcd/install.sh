#!/bin/sh
# Install etcd 3.4 (Debian's etcd-server) for the scale-out tests if it is
# missing. Only the binary is used: the tests start their own etcd on free
# loopback ports with a temporary data dir. A policy-rc.d that denies
# service starts keeps the package from starting a system etcd on
# 127.0.0.1:2379 during the install. Idempotent: does nothing when etcd is
# already installed.
set -eu

if command -v etcd >/dev/null 2>&1; then
	echo "etcd already installed"
	exit 0
fi
apt-get update
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod +x /usr/sbin/policy-rc.d
	trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends etcd-server
etcd --version
echo "etcd installed"
