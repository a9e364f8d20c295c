#!/usr/bin/env bash
# Fails unless each pinned tool module in hack/tools/ requires exactly the
# version the Makefile asks for, so a version bump in one place and not the
# other is caught before anything is built.
#
#   K8S_VERSION=1.36.3 ETCD_VERSION=3.6.16 COREDNS_VERSION=1.14.6 hack/tools/check.sh
#
# (PROMETHEUS_VERSION and VERSITYGW_VERSION likewise, each checked when set.)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

want() { # module dir, module path, version
  local got
  got="$(awk -v m="$2" '$1 == m {print $2} $1 == "require" && $2 == m {print $3}' "$here/$1/go.mod" | head -1)"
  if [ "$got" != "$3" ]; then
    echo "hack/tools/$1/go.mod requires $2 ${got:-(nothing)}, the build asks for $3;" >&2
    echo "  re-pin with: K8S_VERSION=.. ETCD_VERSION=.. COREDNS_VERSION=.. [PROMETHEUS_VERSION=..] [VERSITYGW_VERSION=..] hack/tools/update.sh" >&2
    exit 1
  fi
}
[ -z "${K8S_VERSION:-}" ] || want k8s k8s.io/kubernetes "v$K8S_VERSION"
[ -z "${ETCD_VERSION:-}" ] || want etcd go.etcd.io/etcd/server/v3 "v$ETCD_VERSION"
[ -z "${COREDNS_VERSION:-}" ] || want coredns github.com/coredns/coredns "v$COREDNS_VERSION"
[ -z "${PROMETHEUS_VERSION:-}" ] || want prometheus github.com/prometheus/prometheus "v$PROMETHEUS_VERSION"
[ -z "${VERSITYGW_VERSION:-}" ] || want versitygw github.com/versity/versitygw "v$VERSITYGW_VERSION"
