#!/usr/bin/env bash
# Builds the real Kubernetes control plane the extender's cluster tests run
# against (kube-apiserver, kube-scheduler, etcd) from the Go modules pinned in
# tools/k8s-cluster/go.mod, and the project's DRA driver (tessera-dra, from
# dra/), into DIR (default build/k8s/bin). Does nothing for either when its
# binaries there were built from the current sources (a stamp file holds the
# hash of go.mod and go.sum, and for the driver of its Go files). Modules come
# from the Go module proxy; the module and build caches are Go's own (go env
# GOMODCACHE GOCACHE).
#   scripts/k8s-bins.sh [DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-"$root/build/k8s/bin"}
mod="$root/tools/k8s-cluster"
mkdir -p "$out"
out=$(cd "$out" && pwd)

# -trimpath and no symbol tables: smaller binaries, the same behaviour.
# -mod=readonly: go.mod and go.sum are tidy, and a build must not change them.
flags=(-mod=readonly -trimpath -ldflags='-s -w')
need_go() {
  if ! command -v go >/dev/null; then
    echo "k8s-bins: the Go toolchain (go) is needed to build $1" >&2
    exit 1
  fi
}

stamp="$out/.stamp"
want=$(cat "$mod/go.mod" "$mod/go.sum" | sha256sum | cut -d' ' -f1)
if ! { [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
  [ -x "$out/kube-apiserver" ] && [ -x "$out/kube-scheduler" ] && [ -x "$out/etcd" ]; }; then
  need_go "kube-apiserver, kube-scheduler and etcd"
  echo "k8s-bins: building kube-apiserver, kube-scheduler and etcd ($(go version | cut -d' ' -f3)) into $out"
  begin=$(date +%s)
  rm -f "$stamp"
  (
    cd "$mod"
    go build "${flags[@]}" -o "$out/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
    go build "${flags[@]}" -o "$out/kube-scheduler" k8s.io/kubernetes/cmd/kube-scheduler
    go build "${flags[@]}" -o "$out/etcd" ./etcd
  )
  echo "$want" >"$stamp"
  echo "k8s-bins: built in $(($(date +%s) - begin)) s"
fi

dra="$root/dra"
dra_stamp="$out/.stamp-dra"
dra_want=$(cd "$dra" && find . -name '*.go' ! -name '*_test.go' -print0 | sort -z |
  xargs -0 cat go.mod go.sum | sha256sum | cut -d' ' -f1)
if ! { [ -f "$dra_stamp" ] && [ "$(cat "$dra_stamp")" = "$dra_want" ] && [ -x "$out/tessera-dra" ]; }; then
  need_go "tessera-dra, the DRA driver"
  echo "k8s-bins: building tessera-dra into $out"
  begin=$(date +%s)
  rm -f "$dra_stamp"
  (cd "$dra" && go build "${flags[@]}" -o "$out/tessera-dra" ./cmd/tessera-dra)
  echo "$dra_want" >"$dra_stamp"
  echo "k8s-bins: built tessera-dra in $(($(date +%s) - begin)) s"
fi
