// Package cicheck has only tests: they keep the GitHub workflow
// (.github/workflows/test.yaml), the Makefile's kind targets, the
// Dockerfile and the e2e suite's labels in step, checking what can be
// checked without Docker or GitHub — the paths the jobs read exist, the
// environment every selected spec needs is set, the label filters select
// every spec exactly once (Ginkgo's dry run), the operator image the specs
// deploy is the one the job loads, the node image is pinned by digest to
// the Kubernetes version the project pins.
package cicheck
