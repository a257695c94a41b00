#!/bin/sh
# Build govmomi's vCenter simulator (vcsim) for the VMware tests and demo,
# from govmomi's own command at the version go.mod requires, so the
# simulator and the plugin's client library always match. It goes into a
# cache dir (default ~/.cache/rpengine/vcsim-<version>/vcsim; override with
# RPENGINE_VCSIM_DIR); the tests and the demo find it there, or through
# RPENGINE_VCSIM. Idempotent: does nothing when that version is built.
set -eu
cd "$(dirname "$0")/../.."
GO=${GO:-go}
version=$($GO list -m -f '{{.Version}}' github.com/vmware/govmomi)
dir=${RPENGINE_VCSIM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rpengine/vcsim-$version}
if [ -x "$dir/vcsim" ]; then
	echo "vcsim $version already built in $dir"
	exit 0
fi
mkdir -p "$dir"
GOBIN="$dir" GOFLAGS=-mod=mod $GO install "github.com/vmware/govmomi/vcsim@$version"
echo "vcsim $version built in $dir"
