#!/usr/bin/env bash
# The OCI image: its config must be non-root with the two volumes and the
# OCI labels (ociimage unpack checks them), and its binary must run. With
# a working podman the image is loaded and run; otherwise (no podman, or
# a machine where it cannot start containers) its filesystem is unpacked
# and the binary runs there, as the image's user when root may chroot.
#   scripts/release/image-test.sh dist/rpengine-VERSION-oci.tar
set -euo pipefail
cd "$(dirname "$0")/../.."
image=$1
version=$(scripts/release/version.sh)
tools=${RELEASE_TOOLS:-$PWD/build/tools}
arch=$(go env GOARCH)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -x "$tools/ociimage" ] || go build -C scripts/release/tools -o "$tools/" ./ociimage

"$tools/ociimage" unpack -in "$image" -platform "linux/$arch" -dir "$tmp/root" > "$tmp/config.json"
echo "image-test: config checked (user $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["User"])' "$tmp/config.json"), volumes, labels)"

if command -v podman >/dev/null && podman info >/dev/null 2>&1; then
	ref=localhost/rpengine:$version
	podman load -q -i "$image" >/dev/null
	podman image exists "$ref" || podman tag "$(podman images -q --filter reference='*rpengine*' | head -n 1)" "$ref"
	out=$(podman run --rm --network none "$ref" --version)
	inspect=$(podman run --rm --network none "$ref" plugin inspect /usr/lib/rpengine/ironic.wasm)
	user=$(podman image inspect -f '{{.Config.User}}' "$ref")
	echo "image-test: podman ran $ref as $user"
	podman rmi -f "$ref" >/dev/null || true
elif [ "$(id -u)" = 0 ]; then
	echo "image-test: podman cannot run containers here; running the unpacked image in a chroot as uid 65532"
	out=$(chroot --userspec=65532:65532 "$tmp/root" /usr/bin/rpengine --version)
	inspect=$(chroot --userspec=65532:65532 "$tmp/root" env XDG_CACHE_HOME=/var/cache /usr/bin/rpengine plugin inspect /usr/lib/rpengine/ironic.wasm)
else
	echo "image-test: no podman and not root: running the unpacked binary directly"
	out=$("$tmp/root/usr/bin/rpengine" --version)
	inspect=$("$tmp/root/usr/bin/rpengine" plugin inspect "$tmp/root/usr/lib/rpengine/ironic.wasm")
fi
echo "$out" | head -n 2
grep -qx "engine $version" <<<"$out" || { echo "image-test: the image's binary does not say engine $version"; exit 1; }
grep -q '^name: *ironic$' <<<"$inspect" || { echo "image-test: the image's Ironic plugin did not load:"; echo "$inspect"; exit 1; }
echo "image-test: the image's binary runs and loads its Ironic plugin ($(sed -n 's/^version: *//p' <<<"$inspect"))"
