#!/usr/bin/env bash
# The OCI image: its config must be non-root with the three volumes, the
# OCI labels and a health check running the binary (ociimage unpack checks
# them), and it must run as is. With a working podman the image is loaded
# and run; otherwise (no podman, or a machine where it cannot start
# containers) its filesystem is unpacked and run in a chroot as the image's
# user (as root), or the binary directly (not root).
#
# The daemon is then started with only a config mount (scripts/release/
# image-daemon.sh): the health check answers within 5 s, a cycle writes to a
# real Placement, and the second start compiles nothing (the plugin cache
# volume is left as the first start left it).
#   scripts/release/image-test.sh dist/rpengine-VERSION-oci.tar
set -euo pipefail
cd "$(dirname "$0")/../.."
image=$1
version=$(scripts/release/version.sh)
tools=${RELEASE_TOOLS:-$PWD/build/tools}
arch=$(go env GOARCH)
tmp=$(mktemp -d)
cleanup() {
	[ -n "${ctr:-}" ] && podman rm -f "$ctr" >/dev/null 2>&1
	[ -n "${ref:-}" ] && podman rmi -f "$ref" >/dev/null 2>&1
	[ -f "$tmp/placement/api.pid" ] && scripts/placement/stop.sh "$tmp/placement" >/dev/null 2>&1
	umount "$tmp/root/etc/rpengine" 2>/dev/null
	umount "$tmp/root/proc" 2>/dev/null
	rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT
[ -x "$tools/ociimage" ] || go build -C scripts/release/tools -o "$tools/" ./ociimage

"$tools/ociimage" unpack -in "$image" -platform "linux/$arch" -dir "$tmp/root" > "$tmp/config.json"
echo "image-test: config checked (user $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["User"])' "$tmp/config.json"), volumes, labels, health check)"
[ -s "$tmp/root/etc/ssl/certs/ca-certificates.crt" ] || { echo "image-test: no CA bundle at /etc/ssl/certs/ca-certificates.crt"; exit 1; }

mode=""
if command -v podman >/dev/null && podman info >/dev/null 2>&1; then
	ref=localhost/rpengine:$version
	podman load -q -i "$image" >/dev/null
	if podman run --rm --network none --ulimit host "$ref" --version >"$tmp/out" 2>"$tmp/podman.err"; then
		mode=podman
	else
		echo "image-test: podman loaded $ref but cannot run a container here: $(tail -n 1 "$tmp/podman.err")"
	fi
fi
if [ -z "$mode" ] && [ "$(id -u)" = 0 ]; then
	mode=chroot
	mkdir -p "$tmp/root/proc"
	mount -t proc proc "$tmp/root/proc"
elif [ -z "$mode" ]; then
	mode=direct
fi
echo "image-test: running the image by $mode"
. scripts/release/image-daemon.sh

out=$(in_image --version)
inspect=$(in_image plugin inspect /usr/lib/rpengine/ironic.wasm)
echo "$out" | head -n 2
grep -Eqx "rpengine ${version//./\\.}(-dev)?" <<<"$out" || { echo "image-test: the image's binary does not say rpengine $version"; exit 1; }
grep -q '^name: *ironic$' <<<"$inspect" || { echo "image-test: the image's Ironic plugin did not load:"; echo "$inspect"; exit 1; }
echo "image-test: the image's binary runs and loads its Ironic plugin ($(sed -n 's/^version: *//p' <<<"$inspect"))"

daemon_test
