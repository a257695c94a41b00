#!/usr/bin/env bash
# make plugin-kit: the SDK out of tree. `engine plugin new` writes a plugin
# into a temporary directory outside the repository (with no go.work and
# no GOFLAGS from here), it builds with the go.mod docs/PLUGIN-SDK.md
# gives, offline (GOPROXY=off: nothing may come from a proxy), and passes
# the conformance kit.
set -euo pipefail
cd "$(dirname "$0")/../.."
engine=${RPENGINE_ENGINE_BIN:-$PWD/bin/engine}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$engine" plugin new kitplugin "$tmp/kitplugin"
cd "$tmp/kitplugin"
env -u GOFLAGS GOWORK=off GOPROXY=off GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o kitplugin.wasm .
env -u GOFLAGS GOWORK=off GOPROXY=off go vet ./...
"$engine" plugin inspect kitplugin.wasm
"$engine" plugin test kitplugin.wasm
echo "plugin-kit: a plugin from engine plugin new built outside the repository and passed the kit"
