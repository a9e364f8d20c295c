#!/usr/bin/env bash
# The -ldflags that stamp a Kubernetes binary with its version (what
# `kubectl version`, node info and /version report), as release builds do.
#   hack/tools/k8s-ldflags.sh 1.36.3
set -euo pipefail
v="$1" minor="${1#*.}"
minor="${minor%%.*}"
echo "-s -w -X k8s.io/component-base/version.gitVersion=v$v -X k8s.io/component-base/version.gitMajor=${v%%.*} -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
