//go:build tools

// The Kubernetes binaries the envtest suite and the local cluster build from
// source. This module exists to pin their dependency graph: go.mod and go.sum
// are committed, the build runs with -mod=readonly, so nothing is resolved at
// build time and the same inputs give the same binaries next month. Update it
// with hack/tools/update.sh, never by hand.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
