#!/usr/bin/env bash
# Builds the envtest control plane (kube-apiserver and etcd) from source through
# the Go module proxy, because the usual envtest download bucket is unreachable
# from our machines. The result is cached in bin/k8s/<k8s version>/ and the
# script prints that directory, ready for KUBEBUILDER_ASSETS.
#
# Versions come only from the committed modules hack/tools/k8s and
# hack/tools/etcd (see hack/tools/update.sh); K8S_VERSION and ETCD_VERSION
# must agree with them, which hack/tools/check.sh verifies first.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-1.36.3}"
ETCD_VERSION="${ETCD_VERSION:-3.6.16}"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/hack/tools"
out="${ENVTEST_ASSETS_DIR:-$root/bin/k8s/$K8S_VERSION}"

log() { echo "envtest-binaries: $*" >&2; }

K8S_VERSION="$K8S_VERSION" ETCD_VERSION="$ETCD_VERSION" "$tools/check.sh"
mkdir -p "$out"
# .ci/run's lanes both need these: one builds, the other waits and finds them.
exec 9>"$out/.envtest-build.lock"
flock 9
if [ ! -x "$out/kube-apiserver" ]; then
  log "building kube-apiserver v$K8S_VERSION from source (cold: several minutes on 2 cores)"
  "$tools/build.sh" "$tools/k8s" "$out/kube-apiserver" "$("$tools/k8s-ldflags.sh" "$K8S_VERSION")" k8s.io/kubernetes/cmd/kube-apiserver
fi
if [ ! -x "$out/etcd" ]; then
  log "building etcd v$ETCD_VERSION from source"
  "$tools/build.sh" "$tools/etcd" "$out/etcd" "-s -w" go.etcd.io/etcd/server/v3
fi
echo "$out"
