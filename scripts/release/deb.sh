#!/usr/bin/env bash
# Build the Debian package of one architecture with dpkg-deb from what
# make release put in DIST: /usr/bin/rpengine, the plugins in
# /usr/lib/rpengine, /etc/rpengine/rpengine.toml (a conffile), the
# hardened unit, the docs and the monitoring rules. Every mtime is
# SOURCE_DATE_EPOCH, so the package is reproducible.
#   scripts/release/deb.sh DIST VERSION ARCH
set -euo pipefail
cd "$(dirname "$0")/../.."
dist=$1 version=$2 arch=$3
: "${SOURCE_DATE_EPOCH:?set SOURCE_DATE_EPOCH (scripts/release/release.sh does)}"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/rpengine
doc=$root/usr/share/doc/rpengine
install -D -m 0755 "$dist/rpengine-$version-linux-$arch" "$root/usr/bin/rpengine"
install -d -m 0755 "$root/usr/lib/rpengine" "$doc" "$root/usr/share/man/man1" "$root/usr/share/rpengine/monitoring" \
	"$root/lib/systemd/system" "$root/etc/rpengine" "$root/usr/share/lintian/overrides" "$root/DEBIAN" \
	"$root/var/lib/rpengine" "$root/var/cache/rpengine"
install -m 0644 "$dist"/plugins/*.wasm "$root/usr/lib/rpengine/"
install -m 0644 deploy/engine.toml "$root/etc/rpengine/rpengine.toml"
install -m 0644 deploy/rpengine.service "$root/lib/systemd/system/rpengine.service"
install -m 0644 deploy/monitoring/*.yml deploy/monitoring/*.json "$root/usr/share/rpengine/monitoring/"
install -m 0644 deploy/debian/copyright "$doc/copyright"
install -m 0644 deploy/debian/lintian-overrides "$root/usr/share/lintian/overrides/rpengine"
for f in README.md docs/*.md NOTICE "$dist/THIRD_PARTY_LICENSES.md"; do
	[ -f "$f" ] || continue
	gzip -9n < "$f" > "$doc/$(basename "$f").gz"
done
gzip -9n < CHANGELOG.md > "$doc/changelog.gz"
when=$(date -u -d "@$SOURCE_DATE_EPOCH" -R)
printf 'rpengine (%s-1) unstable; urgency=medium\n\n  * Release %s: see changelog.gz (the project'"'"'s CHANGELOG.md).\n\n -- The rpengine authors <rpengine@example.org>  %s\n' \
	"$version" "$version" "$when" | gzip -9n > "$doc/changelog.Debian.gz"
sed "s/@VERSION@/$version/" deploy/debian/rpengine.1 | gzip -9n > "$root/usr/share/man/man1/rpengine.1.gz"
install -m 0644 deploy/debian/conffiles "$root/DEBIAN/conffiles"
install -m 0755 deploy/debian/postinst deploy/debian/postrm deploy/debian/prerm "$root/DEBIAN/"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed "s/@VERSION@/$version/; s/@ARCH@/$arch/; s/@SIZE@/$size/" deploy/debian/control.in > "$root/DEBIAN/control"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\n' | LC_ALL=C sort | xargs md5sum > DEBIAN/md5sums)
chmod 0644 "$root/DEBIAN/md5sums"
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
dpkg-deb --root-owner-group -Zxz --build "$root" "$dist/rpengine_${version}-1_${arch}.deb" >/dev/null
echo "$dist/rpengine_${version}-1_${arch}.deb"
