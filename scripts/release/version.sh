#!/bin/sh
# Print the release version: the one source is cmd/engine/version.go.
set -eu
cd "$(dirname "$0")/../.."
v=$(sed -n 's/^var version = "\(.*\)"$/\1/p' cmd/engine/version.go)
[ -n "$v" ] || { echo "version.sh: no 'var version = \"...\"' in cmd/engine/version.go" >&2; exit 1; }
echo "$v"
