#!/bin/sh
# Install Debian's Rust compiler with its wasm32 standard library and the
# wasm linker, for the Rust example plugin (plugins/rust-example). Needs
# root (or sudo) for apt-get. Idempotent: does nothing when a rustc with a
# wasm32-wasi(p1) target is already there (scripts/rust/build.sh finds it).
set -eu

if "$(dirname "$0")/build.sh" --check >/dev/null 2>&1; then
	echo "rust with the wasm32-wasi target already installed"
	exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 || { echo "rust missing and not root: cannot install" >&2; exit 1; }
	SUDO="sudo -n"
fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends rustc libstd-rust-dev-wasm32 lld-14
"$(dirname "$0")/build.sh" --check
echo "rust installed"
