#!/usr/bin/env bash
# Builds the real Kubernetes control plane the extender's cluster tests run
# against (kube-apiserver, kube-scheduler, etcd) from the Go modules pinned in
# tools/k8s-cluster/go.mod, into DIR (default build/k8s/bin). Does nothing when
# the binaries there were built from the current go.mod and go.sum (the stamp
# file holds their hash). Modules come from the Go module proxy; the module and
# build caches are Go's own (go env GOMODCACHE GOCACHE).
#   scripts/k8s-bins.sh [DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-"$root/build/k8s/bin"}
mod="$root/tools/k8s-cluster"
mkdir -p "$out"
out=$(cd "$out" && pwd)

stamp="$out/.stamp"
want=$(cat "$mod/go.mod" "$mod/go.sum" | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
  [ -x "$out/kube-apiserver" ] && [ -x "$out/kube-scheduler" ] && [ -x "$out/etcd" ]; then
  exit 0
fi

if ! command -v go >/dev/null; then
  echo "k8s-bins: the Go toolchain (go) is needed to build kube-apiserver, kube-scheduler and etcd" >&2
  exit 1
fi
echo "k8s-bins: building kube-apiserver, kube-scheduler and etcd ($(go version | cut -d' ' -f3)) into $out"
begin=$(date +%s)
cd "$mod"
# -trimpath and no symbol tables: smaller binaries, the same behaviour.
# -mod=readonly: go.mod and go.sum are tidy, and a build must not change them.
flags=(-mod=readonly -trimpath -ldflags='-s -w')
rm -f "$stamp"
go build "${flags[@]}" -o "$out/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
go build "${flags[@]}" -o "$out/kube-scheduler" k8s.io/kubernetes/cmd/kube-scheduler
go build "${flags[@]}" -o "$out/etcd" ./etcd
echo "$want" >"$stamp"
echo "k8s-bins: built in $(($(date +%s) - begin)) s"
