#!/usr/bin/env bash
# Fails when generated or resolved files in the tree are stale: the CRD and
# RBAC (controller-gen manifests, and their copies in charts/streambench),
# the deepcopy code (controller-gen object), the API and CLI references in
# docs/reference (make docs-reference), go.mod/go.sum of streambench
# (go mod tidy) and of the pinned tool modules in hack/tools/ (everything
# their builds compile is pinned), all without a single module look-up
# (hack/gomod-check.sh). It regenerates them, compares them with what was
# there before, and names every file that changed: those must be committed,
# or a fresh clone builds something else than what was tested.
#
# It compares against the files as they were, not against git HEAD, so it
# can run in a working tree with uncommitted changes (make test runs it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
MAKE="${MAKE:-make}"

generated() {
  git ls-files --cached --others --exclude-standard -- \
    go.mod go.sum config/crd config/rbac charts/streambench/crds charts/streambench/files 'api/*zz_generated*.go' docs/reference 'hack/tools/*/go.mod' 'hack/tools/*/go.sum' | sort -u
}
snapshot() { generated | while read -r f; do [ -f "$f" ] && sha256sum "$f"; done; }

before="$(snapshot)"
"$MAKE" --no-print-directory manifests generate docs-reference >/dev/null
# No step here may look anything up on the module proxy (hack/gomod-check.sh):
# streambench's own module must be tidy; each pinned tool module must pin
# what its build compiles, with the build's own tags (hack/tools/build.sh).
hack/gomod-check.sh tidy .
for mod in hack/tools/*/go.mod; do
  dir="$(dirname "$mod")"
  tags=
  # Prometheus is built with remove_all_sd (hack/prometheus-binary.sh).
  [ "$dir" = hack/tools/prometheus ] && tags=remove_all_sd
  hack/gomod-check.sh built "$dir" "$tags"
done
# The cluster's binaries compile client-go, the API types, grpc … once
# with streambench's tests: the same required versions (etcd and
# Prometheus need newer ones than Kubernetes 1.36 pins, and are left out).
hack/gomod-check.sh shared hack/tools/k8s .
hack/gomod-check.sh shared hack/tools/coredns hack/tools/k8s
after="$(snapshot)"

changed="$( (diff <(echo "$before") <(echo "$after") || true) | sed -n 's/^[<>] [0-9a-f]*  //p' | sort -u)"
if [ -n "$changed" ]; then
  echo "verify: these files were stale and have been regenerated; review and commit them:" >&2
  echo "$changed" | sed 's/^/  /' >&2
  echo "(CRD/RBAC: make manifests; deepcopy: make generate; docs/reference: make docs-reference; go.mod/go.sum: go mod tidy)" >&2
  exit 1
fi
echo "verify: CRD, RBAC, deepcopy, docs/reference and go.mod/go.sum are up to date" >&2
