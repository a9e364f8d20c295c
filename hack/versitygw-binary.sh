#!/usr/bin/env bash
# Builds versitygw, Versity's S3 gateway, from source through the Go module
# proxy, for the archive tests that need a real S3-compatible server
# (internal/archive, internal/archive/archivetest, and the controller and
# e2e suites that use archivetest). The binary is cached in
# bin/versitygw/<version>/ and the script prints its path. The version
# comes only from the committed module hack/tools/versitygw;
# VERSITYGW_VERSION must agree with it (hack/tools/check.sh). Pure Go
# (CGO_ENABLED=0, hack/tools/build.sh): its posix backend, the one the
# tests use, needs no cgo.
set -euo pipefail

VERSITYGW_VERSION="${VERSITYGW_VERSION:-1.8.0}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/hack/tools"
out="$root/bin/versitygw/$VERSITYGW_VERSION"

VERSITYGW_VERSION="$VERSITYGW_VERSION" "$tools/check.sh"
# The unit suite and the e2e suite may both ask for it, from lanes that run
# at once, and so may two test packages of one go test: one builds, the
# others wait and find it.
mkdir -p "$out"
exec 9>"$out/.build.lock"
flock 9
if [ ! -x "$out/versitygw" ]; then
  echo "versitygw-binary: building versitygw v$VERSITYGW_VERSION from source" >&2
  # main.Version: what `versitygw --version` says (its own Makefile sets it
  # the same way; unset it says "git").
  "$tools/build.sh" "$tools/versitygw" "$out/versitygw" "-s -w -X main.Version=v$VERSITYGW_VERSION" github.com/versity/versitygw/cmd/versitygw
fi
echo "$out/versitygw"
