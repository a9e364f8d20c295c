#!/usr/bin/env bash
# Builds the node and control-plane binaries of the local cluster from source
# through the Go module proxy, the way hack/envtest-binaries.sh builds
# kube-apiserver (the release download bucket is unreachable from our
# machines): a throw-away module requires k8s.io/kubernetes and replaces every
# k8s.io/<staging> module by its published v0.<minor>.<patch>. CoreDNS is built
# with only the plugins the cluster uses (cluster DNS for headless Services).
# Results are cached in bin/k8s/<k8s version>/; the script prints that
# directory.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-1.36.3}"
ETCD_VERSION="${ETCD_VERSION:-3.6.16}"
COREDNS_VERSION="${COREDNS_VERSION:-1.15.0}"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${LOCAL_CLUSTER_BIN_DIR:-$root/bin/k8s/$K8S_VERSION}"
staging_version="v0.${K8S_VERSION#*.}"

log() { echo "local-cluster build: $*" >&2; }

k8s_binaries=(kube-controller-manager kube-scheduler kubelet kubectl)

build_k8s() {
  local missing=("$@")
  local work; work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  log "building ${missing[*]} v$K8S_VERSION from source (cold: several minutes on 2 cores)"
  (
    cd "$work"
    go mod init streambench.local/local-cluster-k8s >/dev/null 2>&1
    gomod="$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
    [ -n "$gomod" ] || { log "could not download k8s.io/kubernetes@v$K8S_VERSION"; exit 1; }
    grep -E '^[[:space:]]*k8s\.io/[^ ]+ => \./staging/' "$gomod" | awk '{print $1}' | while read -r mod; do
      go mod edit -replace "$mod=$mod@$staging_version"
    done
    go mod edit -require "k8s.io/kubernetes@v$K8S_VERSION"
    {
      printf 'package tools\n\nimport (\n'
      for b in "${missing[@]}"; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$b"; done
      printf ')\n'
    } > tools.go
    go mod tidy >/dev/null
    pkgs=(); for b in "${missing[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
    # The version the binaries report (node info, kubectl version); release
    # builds stamp it the same way.
    local minor="${K8S_VERSION#*.}"; minor="${minor%%.*}"
    ldflags="-s -w -X k8s.io/component-base/version.gitVersion=v$K8S_VERSION -X k8s.io/component-base/version.gitMajor=${K8S_VERSION%%.*} -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
    CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out/" "${pkgs[@]}"
  )
}

build_coredns() {
  local work; work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  log "building coredns v$COREDNS_VERSION (kubernetes, bind, errors, log, cache, ready plugins)"
  (
    cd "$work"
    go mod init streambench.local/local-cluster-coredns >/dev/null 2>&1
    cp "$root/hack/local-cluster/coredns/main.go.txt" main.go
    go mod edit -require "github.com/coredns/coredns@v$COREDNS_VERSION"
    go mod tidy >/dev/null
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/coredns" .
  )
}

mkdir -p "$out"
# kube-apiserver and etcd: the envtest script builds and caches them.
K8S_VERSION="$K8S_VERSION" ETCD_VERSION="$ETCD_VERSION" ENVTEST_ASSETS_DIR="$out" "$root/hack/envtest-binaries.sh" >/dev/null
missing=()
for b in "${k8s_binaries[@]}"; do [ -x "$out/$b" ] || missing+=("$b"); done
[ ${#missing[@]} -eq 0 ] || build_k8s "${missing[@]}"
[ -x "$out/coredns" ] || build_coredns
echo "$out"
