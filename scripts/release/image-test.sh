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
trap 'umount "$tmp/root/proc" 2>/dev/null || true; rm -rf --one-file-system "$tmp"' EXIT
[ -x "$tools/ociimage" ] || go build -C scripts/release/tools -o "$tools/" ./ociimage

"$tools/ociimage" unpack -in "$image" -platform "linux/$arch" -dir "$tmp/root" > "$tmp/config.json"
echo "image-test: config checked (user $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["User"])' "$tmp/config.json"), volumes, labels)"

ran=""
if command -v podman >/dev/null && podman info >/dev/null 2>&1; then
	ref=localhost/rpengine:$version
	podman load -q -i "$image" >/dev/null
	run=(podman run --rm --network none --ulimit host "$ref")
	if out=$("${run[@]}" --version 2>"$tmp/podman.err"); then
		inspect=$("${run[@]}" plugin inspect /usr/lib/rpengine/ironic.wasm)
		echo "image-test: podman ran $ref as $(podman image inspect -f '{{.Config.User}}' "$ref")"
		ran=podman
	else
		echo "image-test: podman loaded $ref but cannot run a container here: $(tail -n 1 "$tmp/podman.err")"
	fi
	podman rmi -f "$ref" >/dev/null || true
fi
if [ -z "$ran" ] && [ "$(id -u)" = 0 ]; then
	echo "image-test: running the unpacked image in a chroot as uid 65532 (with /proc, as a container has)"
	mkdir -p "$tmp/root/proc"
	mount -t proc proc "$tmp/root/proc"
	# The image's environment (PATH, XDG_CACHE_HOME), as a runtime sets it.
	mapfile -t imgenv < <(python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["Env"]))' "$tmp/config.json")
	in_image() { env -i "${imgenv[@]}" /usr/sbin/chroot --userspec=65532:65532 "$tmp/root" /usr/bin/rpengine "$@"; }
	out=$(in_image --version)
	inspect=$(in_image plugin inspect /usr/lib/rpengine/ironic.wasm)
elif [ -z "$ran" ]; then
	echo "image-test: not root: running the unpacked binary directly"
	out=$("$tmp/root/usr/bin/rpengine" --version)
	inspect=$("$tmp/root/usr/bin/rpengine" plugin inspect "$tmp/root/usr/lib/rpengine/ironic.wasm")
fi
echo "$out" | head -n 2
grep -Eqx "rpengine ${version//./\\.}(-dev)?" <<<"$out" || { echo "image-test: the image's binary does not say rpengine $version"; exit 1; }
grep -q '^name: *ironic$' <<<"$inspect" || { echo "image-test: the image's Ironic plugin did not load:"; echo "$inspect"; exit 1; }
echo "image-test: the image's binary runs and loads its Ironic plugin ($(sed -n 's/^version: *//p' <<<"$inspect"))"
