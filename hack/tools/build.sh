#!/usr/bin/env bash
# Builds main packages of one pinned tool module in hack/tools/ into a folder:
#
#   hack/tools/build.sh MODULE_DIR OUT LDFLAGS PACKAGE...
#
# GO_TAGS, if set, are build tags (e.g. remove_all_sd for Prometheus).
# OUT is go build's -o: a folder ending in / for several packages, or the
# binary's path for one.
#
# -mod=readonly: the committed go.mod and go.sum decide every version, and a
# build that would need anything they do not pin fails instead of resolving
# it. -trimpath and -buildvcs=false keep paths and this repository's commit
# out of the binaries, so the same inputs give the same bytes.
set -euo pipefail
dir="$1" out="$2" ldflags="$3"; shift 3
cd "$dir"
GOFLAGS="-mod=readonly -buildvcs=false" GOTOOLCHAIN=local CGO_ENABLED=0 \
  go build -trimpath -tags "${GO_TAGS:-}" -ldflags "$ldflags" -o "$out" "$@"
