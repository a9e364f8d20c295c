#!/usr/bin/env bash
# Builds the envtest control plane (kube-apiserver and etcd) from source through
# the Go module proxy, because the usual envtest download bucket is unreachable
# from our machines. The result is cached in bin/k8s/<k8s version>/ and the
# script prints that directory, ready for KUBEBUILDER_ASSETS.
#
# k8s.io/kubernetes cannot be required as an ordinary module: its go.mod points
# every k8s.io/<staging> module at ./staging/..., so a throw-away module
# replaces each of them with its published v0.<minor>.<patch> version.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-1.36.3}"
ETCD_VERSION="${ETCD_VERSION:-3.6.16}"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${ENVTEST_ASSETS_DIR:-$root/bin/k8s/$K8S_VERSION}"
staging_version="v0.${K8S_VERSION#*.}"

log() { echo "envtest-binaries: $*" >&2; }

build_apiserver() {
  local work; work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  log "building kube-apiserver v$K8S_VERSION from source (cold: several minutes on 2 cores)"
  (
    cd "$work"
    go mod init streambench.local/envtest-apiserver >/dev/null 2>&1
    gomod="$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
    [ -n "$gomod" ] || { log "could not download k8s.io/kubernetes@v$K8S_VERSION"; exit 1; }
    # Every "k8s.io/x => ./staging/src/k8s.io/x" line becomes a replace by version.
    grep -E '^[[:space:]]*k8s\.io/[^ ]+ => \./staging/' "$gomod" | awk '{print $1}' | while read -r mod; do
      go mod edit -replace "$mod=$mod@$staging_version"
    done
    go mod edit -require "k8s.io/kubernetes@v$K8S_VERSION"
    go mod tidy -e >/dev/null 2>&1 || true
    printf 'package tools\n\nimport _ "k8s.io/kubernetes/cmd/kube-apiserver"\n' > tools.go
    go mod tidy >/dev/null
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
  )
}

build_etcd() {
  local work; work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  log "building etcd v$ETCD_VERSION from source"
  (
    cd "$work"
    go mod init streambench.local/envtest-etcd >/dev/null 2>&1
    printf 'package tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' > tools.go
    go mod edit -require "go.etcd.io/etcd/server/v3@v$ETCD_VERSION"
    go mod tidy >/dev/null
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3
  )
}

mkdir -p "$out"
[ -x "$out/kube-apiserver" ] || build_apiserver
[ -x "$out/etcd" ] || build_etcd
echo "$out"
