#!/usr/bin/env bash
# Builds the node and control-plane binaries of the local cluster from source
# through the Go module proxy, the way hack/envtest-binaries.sh builds
# kube-apiserver (the release download bucket is unreachable from our
# machines), from the pinned modules in hack/tools/ (k8s, coredns): their
# committed go.mod and go.sum decide every version. CoreDNS is built with only
# the plugins the cluster uses (cluster DNS for headless Services).
# Results are cached in bin/k8s/<k8s version>/; the script prints that
# directory.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-1.36.3}"
ETCD_VERSION="${ETCD_VERSION:-3.6.16}"
COREDNS_VERSION="${COREDNS_VERSION:-1.14.6}"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tools="$root/hack/tools"
out="${LOCAL_CLUSTER_BIN_DIR:-$root/bin/k8s/$K8S_VERSION}"

log() { echo "local-cluster build: $*" >&2; }

K8S_VERSION="$K8S_VERSION" ETCD_VERSION="$ETCD_VERSION" COREDNS_VERSION="$COREDNS_VERSION" "$tools/check.sh"
mkdir -p "$out"
# One build at a time of the same binaries (.ci/run's lanes run at once).
exec 9>"$out/.cluster-build.lock"
flock 9
# kube-apiserver and etcd: the envtest script builds and caches them.
K8S_VERSION="$K8S_VERSION" ETCD_VERSION="$ETCD_VERSION" ENVTEST_ASSETS_DIR="$out" "$root/hack/envtest-binaries.sh" >/dev/null

missing=()
for b in kube-controller-manager kube-scheduler kubelet kube-proxy kubectl; do
  [ -x "$out/$b" ] || missing+=("k8s.io/kubernetes/cmd/$b")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "building ${missing[*]##*/} v$K8S_VERSION from source (cold: several minutes on 2 cores)"
  "$tools/build.sh" "$tools/k8s" "$out/" "$("$tools/k8s-ldflags.sh" "$K8S_VERSION")" "${missing[@]}"
fi
if [ ! -x "$out/coredns" ]; then
  log "building coredns v$COREDNS_VERSION (bind, errors, log, kubernetes plugins)"
  "$tools/build.sh" "$tools/coredns" "$out/coredns" "-s -w" .
fi
echo "$out"
