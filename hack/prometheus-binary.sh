#!/usr/bin/env bash
# Builds Prometheus from source through the Go module proxy (its release
# tarballs are not reachable from our machines), for the monitoring test
# that scrapes real local brokers and a worker (internal/monitoringtest).
# The binary is cached in bin/prometheus/<version>/ and the script prints
# its path. The version comes only from the committed module
# hack/tools/prometheus; PROMETHEUS_VERSION must agree with it
# (hack/tools/check.sh). -tags remove_all_sd: static and file targets only,
# no cloud service discovery.
set -euo pipefail

PROMETHEUS_VERSION="${PROMETHEUS_VERSION:-0.316.0}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/hack/tools"
out="$root/bin/prometheus/$PROMETHEUS_VERSION"

PROMETHEUS_VERSION="$PROMETHEUS_VERSION" "$tools/check.sh"
# The broker tests and the e2e suite both ask for it, from lanes that run
# at once: one builds, the other waits and finds it.
mkdir -p "$out"
exec 9>"$out/.build.lock"
flock 9
if [ ! -x "$out/prometheus" ]; then
  echo "prometheus-binary: building Prometheus (module v$PROMETHEUS_VERSION) from source" >&2
  GO_TAGS=remove_all_sd "$tools/build.sh" "$tools/prometheus" "$out/prometheus" "-s -w" github.com/prometheus/prometheus/cmd/prometheus
fi
echo "$out/prometheus"
