#!/usr/bin/env bash
# Runs go test on the packages of one stage of make test
# (hack/test-packages.sh STAGE), with the envtest binaries (built on first
# use) on KUBEBUILDER_ASSETS:
#
#   hack/go-test-stage.sh STAGE [go test flags...]
#
# Each step stops the stage with its own error. Inline in the Makefile, a
# package list or envtest path that failed inside a $(...) was lost and go
# test ran on what was left: with no package, on the repository's root
# ("no Go files", exit 1). CI's report stage at a347192 failed in 2 s with
# 0 CPU-s and exit 1, so, and nothing in the log's tail said why.
#
# -vet=off: make test runs go vet on every package first (its "go vet"
# stage, test files included, every analyzer); go test's own vet pass is a
# subset of it, run again on each package and, for its facts, on every
# dependency (cold run 11: 3795 vet processes, 55 CPU-s of them during the
# test suites, after the vet stage).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
stage="${1:?usage: hack/go-test-stage.sh STAGE [go test flags...]}"
shift
pkgs="$(hack/test-packages.sh "$stage")"
if [ -z "$pkgs" ]; then
  echo "go-test-stage: no package's tests belong to stage $stage (see hack/test-packages.sh)" >&2
  exit 1
fi
KUBEBUILDER_ASSETS="$(hack/envtest-binaries.sh)"
export KUBEBUILDER_ASSETS
# shellcheck disable=SC2086 # one package per word
exec go test -vet=off -timeout 40m "$@" $pkgs
