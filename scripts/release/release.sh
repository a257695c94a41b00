#!/usr/bin/env bash
# make release: everything a release ships, in DIST (default dist/,
# gitignored), built reproducibly: static engine binaries (CGO_ENABLED=0,
# -trimpath, no build id, version and commit stamped) for linux/amd64 and
# linux/arm64, the Wasm plugins, the third-party licence inventory, a
# CycloneDX SBOM, the Debian packages, the OCI image and SHA256SUMS over
# them all. Every timestamp is SOURCE_DATE_EPOCH (default: the commit's
# time), so two runs on the same commit give the same checksums
# (scripts/release/reproducible.sh checks that).
set -euo pipefail
cd "$(dirname "$0")/../.."
dist=${DIST:-dist}
# RELEASE_TOOLS, RELEASE_COMMIT and RELEASE_MODIFIED let reproducible.sh
# build a copy of the tree that has no .git with the same stamps.
tools=${RELEASE_TOOLS:-$PWD/build/tools}
version=$(scripts/release/version.sh)
commit=${RELEASE_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
modified=${RELEASE_MODIFIED:-false}
if [ -z "${RELEASE_MODIFIED:-}" ] && [ "$commit" != unknown ] && [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	modified=true
fi
# A release build is one of a commit tagged v$version; any other says
# "$version-dev" in --version and rpengine_build_info (docs/RELEASE.md).
tagged=${RELEASE_TAGGED:-false}
if [ -z "${RELEASE_TAGGED:-}" ] && git tag --points-at HEAD 2>/dev/null | grep -qx "v$version"; then
	tagged=true
fi
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false TZ=UTC LC_ALL=C
CYCLONEDX=github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0
archs=${RELEASE_ARCHS:-amd64 arm64}

rm -rf "$dist"
mkdir -p "$dist/plugins" "$tools"
ld="-s -w -buildid= -X main.version=$version -X main.release=$tagged -X main.commit=$commit -X main.modified=$modified"
for arch in $archs; do
	GOOS=linux GOARCH=$arch go build -trimpath -ldflags "$ld" -o "$dist/rpengine-$version-linux-$arch" ./cmd/engine
done
for p in fake ironic vmware; do
	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -ldflags "-buildid=" -o "$dist/plugins/$p.wasm" "./plugins/$p"
done
go build -C scripts/release/tools -trimpath -o "$tools/" ./licenses ./ociimage
[ -x "$tools/cyclonedx-gomod" ] || GOBIN=$tools go install "$CYCLONEDX"

"$tools/licenses" -C . linux/amd64=./cmd/engine linux/arm64=./cmd/engine \
	wasip1/wasm=./plugins/fake,./plugins/ironic,./plugins/vmware > "$dist/THIRD_PARTY_LICENSES.md"
# One SBOM per engine binary, read from the binary's own build info (its
# modules, versions and h1: hashes, the standard library). -noserial and
# -notimestamp: nothing that differs between two runs. No -licenses: its
# detection depends on the module cache; THIRD_PARTY_LICENSES.md is the
# licence record.
for arch in $archs; do
	"$tools/cyclonedx-gomod" bin -json -std -noserial -notimestamp -version "v$version" \
		-output "$dist/rpengine-$version-linux-$arch.cdx.json" "$dist/rpengine-$version-linux-$arch" 2>"$dist/.cdx.log" ||
		{ cat "$dist/.cdx.log"; exit 1; }
done
rm -f "$dist/.cdx.log"
cp LICENSE NOTICE "$dist/"

for arch in $archs; do
	scripts/release/deb.sh "$dist" "$version" "$arch" >/dev/null
done
bins=()
for arch in $archs; do
	bins+=(-bin "linux/$arch=$dist/rpengine-$version-linux-$arch")
done
"$tools/ociimage" build -out "$dist/rpengine-$version-oci.tar" -version "$version" -revision "$commit" \
	-created "$SOURCE_DATE_EPOCH" "${bins[@]}" -plugins "$dist/plugins" -config deploy/image/rpengine.toml -ca /etc/ssl/certs/ca-certificates.crt \
	-doc LICENSE -doc NOTICE -doc "$dist/THIRD_PARTY_LICENSES.md" -doc README.md -doc docs/CONFIGURATION.md -doc docs/OPERATIONS.md

(cd "$dist" && find . -type f ! -name SHA256SUMS -printf '%P\n' | sort | xargs sha256sum > SHA256SUMS)
echo "release $version ($commit$([ "$modified" = true ] && echo ', modified')) in $dist/:"
(cd "$dist" && find . -type f -printf '%P\n' | sort | xargs ls -l --block-size=K | awk '{printf "  %8s  %s\n", $5, $9}')
host=$dist/rpengine-$version-linux-$(go env GOARCH)
if [ -x "$host" ]; then
	for p in "$dist"/plugins/*.wasm; do
		printf '  plugin %-12s %s\n' "$(basename "$p")" "$("$host" plugin inspect "$p" 2>/dev/null | sed -n 's/^version: *//p')"
	done
fi
