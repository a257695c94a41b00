#!/usr/bin/env bash
# The Debian package, installed for real (root; CI runs it on a fresh
# machine): lintian, down to info tags (each one left is overridden with its reason in
# deploy/debian/lintian-overrides), dpkg -i, then the installed binary as
# the package's system user: --version, the plugins postinst compiled
# into the daemon's cache, validate on the shipped config edited for a
# local real Placement and the fake plugin, one cycle (once) that compiles
# nothing, a second one that writes nothing; two upgrades (dpkg -i again):
# the old build's code dropped, the configured plugin compiled, a plugin
# that does not compile only warned about; then dpkg --purge.
#   scripts/release/deb-test.sh dist/rpengine_VERSION-1_amd64.deb
set -euo pipefail
cd "$(dirname "$0")/../.."
deb=$1
version=$(scripts/release/version.sh)
work=$(mktemp -d)
chmod 0755 "$work"
cleanup() {
	scripts/placement/stop.sh "$work/placement" >/dev/null 2>&1 || true
	dpkg --purge rpengine >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

echo "deb-test: lintian"
lintian -I --fail-on error,warning,info "$deb"

echo "deb-test: dpkg -i $(basename "$deb")"
dpkg -i "$deb" 2> "$work/install.err" || { cat "$work/install.err"; exit 1; }
cat "$work/install.err" >&2
# The shipped config (no clouds.yaml yet) still names its plugin: no warning.
if grep -q "rpengine: warning" "$work/install.err"; then
	echo "deb-test: postinst warned on a fresh install"
	exit 1
fi
dpkg -L rpengine | grep -E '^/(usr/bin/rpengine|usr/lib/rpengine/ironic.wasm|etc/rpengine/rpengine.toml|lib/systemd/system/rpengine.service)$'
getent passwd rpengine
stat -c '%U:%G %a %n' /etc/rpengine/rpengine.toml /var/lib/rpengine
if command -v systemd-analyze >/dev/null; then
	systemd-analyze security --offline=true /lib/systemd/system/rpengine.service | tail -n 1
fi

# postinst compiles the shipped plugins, as rpengine, into the cache the
# unit's daemon reads ($XDG_CACHE_HOME=/var/cache: /var/cache/rpengine/wazero).
cache=/var/cache/rpengine/wazero
compiled() { find "$cache" -type f -printf '%P %s\n' | LC_ALL=C sort; }
echo "deb-test: postinst compiled the shipped plugins into $cache"
shipped=$(compiled)
echo "$shipped"
n=$(grep -c . <<<"$shipped" || true)
[ "$n" -ge 3 ] || { echo "deb-test: $n compiled modules in $cache after dpkg -i, want the 3 shipped plugins"; exit 1; }
[ -z "$(find /var/cache/rpengine ! -user rpengine)" ] || { echo "deb-test: files in /var/cache/rpengine not rpengine's"; exit 1; }

echo "deb-test: rpengine --version"
out=$(/usr/bin/rpengine --version)
echo "$out"
grep -Eqx "rpengine ${version//./\\.}(-dev)?" <<<"$out" || { echo "deb-test: --version does not say rpengine $version (-dev unless built from tag v$version)"; exit 1; }
# The commit the package was built from: reproducible.sh exports it (the
# checkout may have moved on since), else this checkout's HEAD.
if commit=${RELEASE_COMMIT:-$(git rev-parse HEAD 2>/dev/null)}; then
	grep -q "commit: *$commit" <<<"$out" || { echo "deb-test: --version does not name commit $commit"; exit 1; }
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
listen=$(free_port)
scripts/placement/start.sh "$work/placement" "$port" >/dev/null
# The shipped config, edited for a local Placement (noauth2) and the fake
# plugin: the Ironic tables go and the server moves to a free port;
# everything else (the state file in /var/lib/rpengine, the log) stays.
cfg=$work/rpengine.toml
awk '/^\[(auth|placement|plugin\.services|plugin\.config)\]/ {skip=1; next} /^\[/ {skip=0} !skip' \
	/etc/rpengine/rpengine.toml | sed 's#"/usr/lib/rpengine/ironic.wasm"#"/usr/lib/rpengine/fake.wasm"#; s#"127.0.0.1:9180"#"127.0.0.1:'"$listen"'"#' > "$cfg"
cat >> "$cfg" <<CONF

[auth]
method = "noauth"

[placement]
endpoint = "http://127.0.0.1:$port"
token = "admin"

[plugin.config]
nodes = 16
seed = 5
resource_classes = ["baremetal-gold"]
CONF
chmod 0644 "$cfg"
as_user() { runuser -u rpengine -- env XDG_CACHE_HOME=/var/cache "$@"; }

echo "deb-test: rpengine validate (as rpengine, the shipped config edited)"
as_user /usr/bin/rpengine validate --config "$cfg"
echo "deb-test: rpengine once, twice (the first loads the plugin compiled at install: the cache stays as it was)"
TIMEFORMAT="first once: %U s user + %S s sys CPU, %R s wall (engine and plugin host; load $(cut -d' ' -f1-3 /proc/loadavg))"
time as_user /usr/bin/rpengine once --config "$cfg" --json > "$work/once1.json" 2> "$work/once1.log" ||
	{ tail -n 20 "$work/once1.log"; exit 1; }
if [ "$(compiled)" != "$shipped" ]; then
	echo "deb-test: the first once compiled a plugin; the cache was:"
	echo "$shipped"
	echo "and is:"
	compiled
	exit 1
fi
as_user /usr/bin/rpengine once --config "$cfg" --json > "$work/once2.json" 2> "$work/once2.log" ||
	{ tail -n 20 "$work/once2.log"; exit 1; }
python3 - "$work/once1.json" "$work/once2.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
print(f"first cycle: {a['nodes']} nodes, {a['created']} created, {len(a['errors'])} errors; "
      f"second: {b['created'] + b['updated'] + b['deleted']} writes, {b['placement_requests']} Placement requests")
assert not a["errors"] and not b["errors"], (a["errors"], b["errors"])
assert a["nodes"] == 16 and a["created"] == 16, a
assert b["created"] + b["updated"] + b["deleted"] == 0 and b["placement_requests"] == 1, b
PY
test -s /var/lib/rpengine/state.json || { echo "deb-test: no state in /var/lib/rpengine"; exit 1; }
stat -c '%U %a %n' /var/lib/rpengine/state.json
# An upgrade (postinst configure with the installed version): the old
# build's code goes, the shipped plugins and the one the config names are
# compiled again; a plugin that cannot be compiled is a warning only.
echo "deb-test: upgrade: the old build's code dropped, the configured plugin compiled"
install -d -o rpengine -g rpengine -m 0700 "$cache/wazero-v0.0.0-old"
install -o rpengine -g rpengine -m 0600 /dev/null "$cache/wazero-v0.0.0-old/stale"
# The site's own plugin: the fake one with a custom section appended (a
# valid module with another digest, so another cache entry; one byte of
# content: wazero 1.12 refuses an empty custom section at the end).
site=/var/lib/rpengine/site.wasm
{ cat /usr/lib/rpengine/fake.wasm; printf '\000\006\004site1'; } > "$site"
chmod 0644 "$site"
sed -i 's#^path = "/usr/lib/rpengine/ironic.wasm"#path = "'"$site"'"#' /etc/rpengine/rpengine.toml
grep -qx "path = \"$site\"" /etc/rpengine/rpengine.toml
dpkg --force-confold -i "$deb" 2> "$work/upgrade1.err" || { cat "$work/upgrade1.err"; exit 1; }
test ! -e "$cache/wazero-v0.0.0-old" || { echo "deb-test: the old build's code is still in $cache"; exit 1; }
n=$(compiled | grep -c . || true)
[ "$n" -eq $(( $(grep -c . <<<"$shipped") + 1 )) ] || { echo "deb-test: $n compiled modules after the upgrade, want the shipped ones and $site"; compiled; exit 1; }
grep -q warning "$work/upgrade1.err" && { cat "$work/upgrade1.err"; exit 1; }
echo "deb-test: upgrade: a configured plugin that does not compile warns; the install succeeds"
sed -i 's#^path = "'"$site"'"#path = "/var/lib/rpengine/missing.wasm"#' /etc/rpengine/rpengine.toml
dpkg --force-confold -i "$deb" 2> "$work/upgrade2.err" || { cat "$work/upgrade2.err"; exit 1; }
cat "$work/upgrade2.err"
grep -q "rpengine: warning: the plugin in /etc/rpengine/rpengine.toml was not compiled ahead" "$work/upgrade2.err" ||
	{ echo "deb-test: no warning for the plugin that does not compile"; exit 1; }
[ "$(compiled)" = "$shipped" ] || { echo "deb-test: the shipped plugins were not compiled again"; compiled; exit 1; }

echo "deb-test: dpkg --purge"
dpkg --purge rpengine 2> "$work/purge.err"
test ! -e /usr/bin/rpengine && test ! -e /var/cache/rpengine
test -d /var/lib/rpengine || { echo "deb-test: purge deleted the state (the ownership record)"; exit 1; }
grep -q "purge kept /var/lib/rpengine" "$work/purge.err" || { echo "deb-test: purge did not say it kept the state"; cat "$work/purge.err"; exit 1; }
rm -rf /var/lib/rpengine
echo "deb-test: the package installed, ran a cycle against the real Placement and purged cleanly"
