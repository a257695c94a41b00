#!/usr/bin/env bash
# Part of `make check`: the tracked tree holds sources, never build outputs
# nor a build machine's absolute paths; README.md links every other
# document; and `go mod tidy` has nothing to change. Exits 1 naming what is
# wrong.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0

# Build outputs by name: test binaries, Wasm modules, profiles, bin/ and build/.
outputs=$(git ls-files -- '*.test' '*.wasm' '*.prof' '*.pprof' 'bin/*' 'build/*' '*/bin/*' '*/build/*')
if [ -n "$outputs" ]; then
	echo "check: build outputs are tracked (git rm --cached them):"
	echo "$outputs"
	status=1
fi

# Binaries by content, whatever their name: git calls a file with NUL
# bytes "-text". No source of this project is binary; a binary asset that
# must be tracked needs an exception here, with its reason. The one:
# docs/screenshots/*.png, pictures of the status page for the docs
# (`make screenshots` makes them; a person reads them, nothing builds them).
binaries=$(git ls-files --eol | awk '$1 == "i/-text" { print $NF }' | grep -vE '^docs/screenshots/[a-z0-9-]+\.png$' || true)
if [ -n "$binaries" ]; then
	echo "check: tracked binary files:"
	echo "$binaries"
	status=1
fi

# Absolute paths of a build machine: a home or work directory, or this
# checkout's own path (a run output pasted in, a log, a config).
paths=$( { git grep -nIE "(^|[[:space:]\"'\`(=:,])/(home|Users|root|work)/[A-Za-z0-9_.-]+" -- . || true
	git grep -nIF "$PWD/" -- . || true; } | sort -u)
if [ -n "$paths" ]; then
	echo "check: tracked files hold absolute paths of a build machine:"
	echo "$paths"
	status=1
fi

# README.md is the newcomer's page: every other document is linked from it.
for doc in $(git ls-files -- '*.md' | grep -v -e '^README.md$' -e '/testdata/cli/'); do
	if ! grep -qF "]($doc)" README.md; then
		echo "check: README.md does not link $doc"
		status=1
	fi
done

# Every module of the repository, the root's and any nested one.
for mod in $(git ls-files -- go.mod '*/go.mod'); do
	dir=$(dirname "$mod")
	if ! diff=$(go -C "$dir" mod tidy -diff 2>&1); then
		echo "check: go mod tidy would change $dir/go.mod or go.sum:"
		echo "$diff"
		status=1
	fi
done
exit "$status"
