#!/usr/bin/env bash
# make release-test: make release twice and compare every checksum. The
# second build runs in a copy of the tree at another path (what -trimpath
# must hide) with an empty Go build cache (so nothing is reused from the
# first), the same commit stamp and SOURCE_DATE_EPOCH. Then the Debian
# package and the image are checked (deb-test.sh needs root; image-test.sh
# runs the image with podman where it can, else unpacks it).
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
commit=$(git rev-parse HEAD)
modified=false
[ -z "$(git status --porcelain --untracked-files=no)" ] || modified=true
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
tagged=false
if git tag --points-at HEAD | grep -qx "v$(scripts/release/version.sh)"; then tagged=true; fi
export RELEASE_COMMIT=$commit RELEASE_MODIFIED=$modified RELEASE_TOOLS=$PWD/build/tools RELEASE_TAGGED=$tagged

start=$(date +%s)
DIST=$PWD/dist scripts/release/release.sh
first=$(( $(date +%s) - start ))
mkdir -p "$tmp/src"
git ls-files -z | xargs -0 cp --parents -t "$tmp/src"
start=$(date +%s)
(cd "$tmp/src" && GOCACHE=$tmp/gocache DIST=$tmp/dist scripts/release/release.sh >/dev/null)
second=$(( $(date +%s) - start ))
if ! diff -u dist/SHA256SUMS "$tmp/dist/SHA256SUMS"; then
	echo "release-test: the two builds differ (above: - first build, + second)"
	exit 1
fi
echo "release-test: two builds ($first s, then $second s with an empty Go cache at another path) are identical: $(wc -l < dist/SHA256SUMS) files"
version=$(scripts/release/version.sh)
scripts/release/image-test.sh "dist/rpengine-$version-oci.tar"
if [ "$(id -u)" = 0 ]; then
	scripts/release/deb-test.sh "dist/rpengine_${version}-1_$(go env GOARCH).deb"
else
	echo "release-test: not root: the Debian package was not installed (deb-test.sh)"
fi
