#!/bin/sh
# Builds the Rust example plugin: scripts/rust/build.sh OUT.wasm. With
# --check, only says whether a toolchain is there. It looks for a rustc
# whose sysroot has the wasm32-wasip1 (rustup) or wasm32-wasi (Debian's
# libstd-rust-dev-wasm32) standard library, and for Debian's wasm-ld when
# rustc's own rust-lld is absent. Without a toolchain it prints why and
# exits 0 without building: make plugins skips it cleanly (the Go test
# then skips, or fails under RPENGINE_REQUIRE_E2E=1 as in CI).
set -eu
cd "$(dirname "$0")/../.."

find_toolchain() {
	for rc in ${RUSTC:-} /usr/bin/rustc rustc; do
		command -v "$rc" >/dev/null 2>&1 || continue
		root=$("$rc" --print sysroot 2>/dev/null) || continue
		for t in wasm32-wasip1 wasm32-wasi; do
			if [ -d "$root/lib/rustlib/$t/lib" ]; then
				RUSTC_BIN=$rc TARGET=$t
				return 0
			fi
		done
	done
	return 1
}

if ! find_toolchain; then
	echo "rust-example: skipped: no rustc with the wasm32-wasi(p1) target (scripts/rust/install.sh installs Debian's)"
	[ "${1:-}" = "--check" ] && exit 1
	exit 0
fi
LINKER=""
for l in wasm-ld-14 wasm-ld; do
	if command -v "$l" >/dev/null 2>&1; then LINKER="-C linker=$l"; break; fi
done
if [ "${1:-}" = "--check" ]; then
	echo "$RUSTC_BIN ($("$RUSTC_BIN" --version)) --target $TARGET $LINKER"
	exit 0
fi
out=${1:?usage: scripts/rust/build.sh OUT.wasm}
# shellcheck disable=SC2086 # LINKER is two words or none
"$RUSTC_BIN" --edition 2021 --target "$TARGET" --crate-type cdylib -C opt-level=s -C strip=symbols \
	$LINKER -o "$out" plugins/rust-example/src/lib.rs
echo "rust-example: built $out with $RUSTC_BIN --target $TARGET"
