#!/bin/sh
# Install what make release and its checks use from Debian: promtool
# (package prometheus: `promtool check/test rules` on deploy/monitoring),
# lintian (the Debian package's checks), podman (runs the OCI image where
# the machine allows; image-test.sh falls back to unpacking it), zsh (zsh -n
# on `engine completion zsh`, cmd/engine), ansible-core and ansible-lint
# (deploy/kolla's role: --syntax-check and lint). dpkg-deb comes with dpkg.
# Idempotent: does nothing when present.
set -eu
need=""
command -v promtool >/dev/null 2>&1 || need="$need prometheus"
command -v lintian >/dev/null 2>&1 || need="$need lintian"
command -v podman >/dev/null 2>&1 || need="$need podman"
command -v zsh >/dev/null 2>&1 || need="$need zsh"
[ -s /etc/ssl/certs/ca-certificates.crt ] || need="$need ca-certificates"   # copied into the image
command -v ansible-playbook >/dev/null 2>&1 || need="$need ansible-core"
command -v ansible-lint >/dev/null 2>&1 || need="$need ansible-lint"
if [ -z "$need" ]; then
	echo "release tools already installed"
	exit 0
fi
if ! apt-cache policy $need 2>/dev/null | grep -q 'Candidate: [0-9]'; then
	apt-get update
fi
# prometheus' postinst starts no server without systemd running; where it
# does, it is the distribution's service and the tests do not use it.
DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=600 --no-install-recommends $need
echo "release tools installed:$need"
