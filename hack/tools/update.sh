#!/usr/bin/env bash
# Re-pins the from-source tool modules in hack/tools/ (k8s, etcd, coredns) to
# the versions given, and is the only step that resolves module versions for
# them. The builds (hack/envtest-binaries.sh, hack/local-cluster/build-binaries.sh)
# use the committed go.mod and go.sum with -mod=readonly and never resolve
# anything, so a moved "latest" cannot change what they build.
#
#   K8S_VERSION=1.36.3 ETCD_VERSION=3.6.16 COREDNS_VERSION=1.15.0 PROMETHEUS_VERSION=0.316.0 hack/tools/update.sh
#
# (PROMETHEUS_VERSION is the Go module's v0.<3xx>.<y>, i.e. Prometheus 3.<x>.<y>.)
#
# Then bump the same versions in the Makefile and commit the go.mod/go.sum
# changes; the bin/k8s/<version>/ cache is keyed by the Kubernetes version.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:?set K8S_VERSION, e.g. 1.36.3}"
ETCD_VERSION="${ETCD_VERSION:?set ETCD_VERSION, e.g. 3.6.16}"
COREDNS_VERSION="${COREDNS_VERSION:?set COREDNS_VERSION, e.g. 1.15.0}"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export GOFLAGS=-mod=mod GOTOOLCHAIN=local

# Raises every module this module and streambench's both use to
# streambench's version where that is higher, so the packages both compile
# (client-go, the API types, x/net, protobuf …) are the same and Go's build
# cache compiles them once for the tests and for the cluster's binaries
# (the Makefile's "one Go build configuration"). Run in the tool module.
align_with_streambench() {
  local m ours theirs
  LC_ALL=C join <(cd "$here/../.." && go list -m -f '{{.Path}} {{with .Replace}}{{.Version}}{{else}}{{.Version}}{{end}}' all | LC_ALL=C sort) \
       <(go list -m -f '{{.Path}} {{with .Replace}}{{.Version}}{{else}}{{.Version}}{{end}}' all | LC_ALL=C sort) |
    while read -r m ours theirs; do
      if [ "$ours" != "$theirs" ] && [ "$(printf '%s\n%s\n' "$theirs" "$ours" | sort -V | tail -1)" = "$ours" ]; then
        go mod edit -require "$m@$ours"
      fi
    done
  go mod tidy
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
  align_with_streambench
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
"$here/check.sh"
