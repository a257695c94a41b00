#!/bin/sh
# Install Debian's chromium for the status page's browser test if it is
# missing. Needs root (or sudo) for apt-get. Idempotent: does nothing when
# a chromium is already on the PATH.
set -eu

for b in chromium chromium-browser google-chrome; do
	if command -v "$b" >/dev/null 2>&1; then
		echo "chromium already installed: $(command -v "$b")"
		exit 0
	fi
done
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 || { echo "chromium missing and not root: cannot install" >&2; exit 1; }
	SUDO="sudo -n"
fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends chromium
command -v chromium
echo "chromium installed"
