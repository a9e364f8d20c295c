#!/usr/bin/env bash
# Re-pins the from-source tool modules in hack/tools/ (k8s, etcd, coredns) to
# the versions given, and is the only step that resolves module versions for
# them. The builds (hack/envtest-binaries.sh, hack/local-cluster/build-binaries.sh)
# use the committed go.mod and go.sum with -mod=readonly and never resolve
# anything, so a moved "latest" cannot change what they build.
#
#   K8S_VERSION=1.36.3 ETCD_VERSION=3.6.16 COREDNS_VERSION=1.14.6 PROMETHEUS_VERSION=0.316.0 VERSITYGW_VERSION=1.8.0 hack/tools/update.sh
#
# (PROMETHEUS_VERSION is the Go module's v0.<3xx>.<y>, i.e. Prometheus 3.<x>.<y>;
# PROMETHEUS_VERSION and VERSITYGW_VERSION are optional: unset, that module
# is left as it is.)
#
# Then bump the same versions in the Makefile and commit the go.mod/go.sum
# changes; the bin/k8s/<version>/ cache is keyed by the Kubernetes version.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:?set K8S_VERSION, e.g. 1.36.3}"
ETCD_VERSION="${ETCD_VERSION:?set ETCD_VERSION, e.g. 3.6.16}"
COREDNS_VERSION="${COREDNS_VERSION:?set COREDNS_VERSION, e.g. 1.14.6}"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export GOFLAGS=-mod=mod GOTOOLCHAIN=local

# Raises every module this module and another (streambench's own, or the
# k8s tool module) both use to the other's version where that is higher, so
# the packages both compile (client-go, the API types, x/net, grpc,
# protobuf …) are the same and Go's build cache compiles them once for the
# tests and for the cluster's binaries (the Makefile's "one Go build
# configuration"). Only a raise: a `replace` to a lower version would not
# do, because Go keys a compiled package by the *required* version
# (`module golang.org/x/sys@v0.49.0` in its action ID even when replaced by
# v0.47.0), so nothing would be shared. Where a tool needs a module newer
# than the k8s module has, raise streambench's go.mod first (go get), then
# run this script: the k8s module follows streambench, the tool follows k8s.
# Run in the tool module; $1 is the other module's directory.
align_with() {
  local m ours theirs
  LC_ALL=C join <(cd "$1" && go list -m -f '{{.Path}} {{.Version}}' all | LC_ALL=C sort) \
       <(go list -m -f '{{.Path}} {{.Version}}' all | LC_ALL=C sort) |
    while read -r m ours theirs; do
      if [ "$ours" != "$theirs" ] && [ "$(printf '%s\n%s\n' "$theirs" "$ours" | sort -V | tail -1)" = "$ours" ]; then
        go mod edit -require "$m@$ours"
      fi
    done
  go mod tidy
  (cd "$1" && go mod tidy)
}

# k8s.io/kubernetes cannot be required as an ordinary module: its go.mod points
# every k8s.io/<staging> module at ./staging/..., so each of them is replaced
# by its published v0.<minor>.<patch>.
(
  cd "$here/k8s"
  rm -f go.mod go.sum
  go mod init streambench.local/tools/k8s >/dev/null 2>&1
  gomod="$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
  [ -n "$gomod" ] || { echo "update: could not download k8s.io/kubernetes@v$K8S_VERSION" >&2; exit 1; }
  grep -E '^[[:space:]]*k8s\.io/[^ ]+ => \./staging/' "$gomod" | awk '{print $1}' | while read -r mod; do
    go mod edit -replace "$mod=$mod@v0.${K8S_VERSION#*.}"
  done
  # tools.go (present before tidy) keeps the requirement: tidy never drops a
  # module whose packages are imported, and never raises a required version.
  go mod edit -require "k8s.io/kubernetes@v$K8S_VERSION"
  go mod tidy
  align_with "$here/../.."
)
(
  cd "$here/etcd"
  rm -f go.mod go.sum
  go mod init streambench.local/tools/etcd >/dev/null 2>&1
  go mod edit -require "go.etcd.io/etcd/server/v3@v$ETCD_VERSION"
  go mod tidy
)
(
  cd "$here/coredns"
  rm -f go.mod go.sum
  go mod init streambench.local/tools/coredns >/dev/null 2>&1
  go mod edit -require "github.com/coredns/coredns@v$COREDNS_VERSION"
  go mod tidy
  # CoreDNS compiles client-go, the API types and grpc as the cluster's
  # binaries do: with the k8s module's versions they are compiled once (on a
  # cold machine about 30 MB of Go, ~4 CPU-minutes, less). Pick a CoreDNS
  # whose k8s.io requirements are not above K8S_VERSION's (1.14.6 needs
  # client-go v0.35.4; 1.15.0 needed v0.37.1, which cannot be shared).
  align_with "$here/k8s"
)
if [ -n "${PROMETHEUS_VERSION:-}" ]; then (
  # Built with -tags remove_all_sd (static and file targets only). -e: tidy
  # walks every tag, and the service-discovery plugins that tag leaves out
  # import modules the build never needs, at versions the Go proxy may
  # refuse (it refused hashicorp/nomad/api until November 2026). What the
  # build does need is checked offline by make verify (hack/gomod-check.sh
  # built), so run it after this script.
  cd "$here/prometheus"
  rm -f go.mod go.sum
  go mod init streambench.local/tools/prometheus >/dev/null 2>&1
  go mod edit -require "github.com/prometheus/prometheus@v$PROMETHEUS_VERSION"
  go mod tidy -e
) fi
if [ -n "${VERSITYGW_VERSION:-}" ]; then (
  # The S3 gateway of the archive tests (hack/versitygw-binary.sh), built
  # in the unit stage's lane. Aligned with streambench, which compiles the
  # same AWS SDK for Go v2 (internal/archive), x/net and x/sys: at
  # v1.8.0 all but go-colorable and go-isatty (newer here) are then
  # compiled once.
  cd "$here/versitygw"
  rm -f go.mod go.sum
  go mod init streambench.local/tools/versitygw >/dev/null 2>&1
  go mod edit -require "github.com/versity/versitygw@v$VERSITYGW_VERSION"
  go mod tidy
  align_with "$here/../.."
) fi
"$here/check.sh"
