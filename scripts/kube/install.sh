#!/bin/sh
# Build kube-apiserver for the Kubernetes scale-out tests (make test-kube).
# No kube-apiserver is packaged in Debian and the envtest download site is
# out of reach, so it is built from k8s.io/kubernetes on the Go module
# proxy, in a throwaway module that replaces each of its staging modules
# (k8s.io/api, k8s.io/apimachinery, ...: the ./staging/src replaces of its
# go.mod) by their published v0.x.y. The binary goes into a cache dir
# (default ~/.cache/rpengine/kube-apiserver-<version>/kube-apiserver;
# override with RPENGINE_KUBE_DIR); the tests find it there, or through
# RPENGINE_KUBE_APISERVER. Idempotent: does nothing when that version is
# built. About 13 minutes cold on 2 cores.
set -eu
cd "$(dirname "$0")/../.."
GO=${GO:-go}
version=${KUBE_VERSION:-v1.37.2}
# k8s.io/kubernetes v1.X.Y ships its staging modules as v0.X.Y.
staging=v0.${version#v1.}
dir=${RPENGINE_KUBE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rpengine/kube-apiserver-$version}
if [ -x "$dir/kube-apiserver" ]; then
	echo "kube-apiserver $version already built in $dir"
	exit 0
fi
mkdir -p "$dir/src"
cd "$dir/src"
rm -f go.mod go.sum
cat >go.mod <<MOD
module rpengine.invalid/kubebuild

go 1.26.0
MOD
export GOFLAGS=-mod=mod GOWORK=off
modfile=$($GO mod download -json "k8s.io/kubernetes@$version" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')
[ -n "$modfile" ] || { echo "kube install: no go.mod for k8s.io/kubernetes@$version" >&2; exit 1; }
for m in $(sed -n 's|^[[:space:]]*\(k8s.io/[^ ]*\) => \./staging/.*|\1|p' "$modfile"); do
	$GO mod edit -replace "$m=$m@$staging"
done
$GO mod edit -require "k8s.io/kubernetes@$version"
$GO get "k8s.io/kubernetes/cmd/kube-apiserver@$version"
pkg=k8s.io/component-base/version
$GO build -o "$dir/kube-apiserver.tmp" \
	-ldflags "-s -w -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=${staging#v0.}" \
	k8s.io/kubernetes/cmd/kube-apiserver
mv "$dir/kube-apiserver.tmp" "$dir/kube-apiserver"
echo "kube-apiserver $version built in $dir"
