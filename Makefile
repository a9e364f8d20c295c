# streambench — make help lists every target.

# The release this tree is: the chart's appVersion (charts/streambench/Chart.yaml)
# is the one place it is written. A build from a tag says the tag; any other
# build says the release it leads to, "-dev", and the commit.
APP_VERSION := $(shell sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$$/\1/p' charts/streambench/Chart.yaml)
VERSION ?= $(shell git describe --tags --exact-match --match 'v*' 2>/dev/null || echo v$(APP_VERSION)-dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
VERSION_PKG := github.com/streambench/streambench-operator/internal/version
LDFLAGS ?= -s -w -X $(VERSION_PKG).version=$(VERSION) -X $(VERSION_PKG).commit=$(COMMIT)
# The released image (the release workflow pushes it with ko); the chart and
# config/manager default to it too.
IMG ?= ghcr.io/streambench/streambench:$(APP_VERSION)
# The from-source builds take their versions from the pinned modules in
# hack/tools/ (go.mod and go.sum committed); these must agree with them
# (hack/tools/check.sh) and are changed together with hack/tools/update.sh.
K8S_VERSION ?= 1.36.3
ETCD_VERSION ?= 3.6.16
COREDNS_VERSION ?= 1.14.6
# The Prometheus Go module (v0.<3xx>.<y> is Prometheus 3.<x>.<y>) of the monitoring test.
PROMETHEUS_VERSION ?= 0.316.0
# versitygw (Versity's S3 gateway, github.com/versity/versitygw) of the archive tests.
VERSITYGW_VERSION ?= 1.8.0
CONTROLLER_TOOLS_VERSION ?= v0.21.0
GOLANGCI_LINT_VERSION ?= v2.6.2
# ko builds the images (no Docker): the local cluster's tarball and releases.
KO_VERSION ?= v0.18.1
# crd-ref-docs renders docs/reference/api.md from the API types (make docs-reference).
CRD_REF_DOCS_VERSION ?= v0.3.0
GINKGO_VERSION ?= $(shell go list -m -f '{{.Version}}' github.com/onsi/ginkgo/v2)

# One Go build configuration for everything built or tested here: pure Go
# (CGO_ENABLED=0) and -trimpath, as the released binary (ko) and the
# from-source tools (hack/tools/build.sh) are built. Go's build cache is
# keyed by both, so before this the test binaries compiled client-go, the
# Kubernetes API types and their dependencies once more than the image and
# once more than kube-apiserver did: on a cold 2-core machine several
# minutes of CPU (docs/decisions.md, "One build configuration"). The
# tests now also run the code the image ships (the Pulsar client's pure-Go
# zstd, Go's own DNS resolver). hack/tools/k8s requires the same versions
# of the modules both build (hack/tools/update.sh), or nothing is shared.
export CGO_ENABLED ?= 0
export GOFLAGS := $(strip -trimpath $(filter-out -trimpath,$(shell go env GOFLAGS)))

LOCALBIN ?= $(CURDIR)/bin
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint
GINKGO ?= $(LOCALBIN)/ginkgo
KO ?= $(LOCALBIN)/ko
CRD_REF_DOCS ?= $(LOCALBIN)/crd-ref-docs

SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
# allowDangerousTypes: the workload keeps OMB's floating-point fields (backlogDrainRatio,
# randomBytesRatio) and accepts fractional minutes and GB for short runs.
# The chart gets copies, not its own generation: config/ stays the one source,
# and hack/verify.sh fails when the copies drift.
manifests: controller-gen ## Generate the CRD and RBAC manifests into config/ and copy them into the chart.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd:allowDangerousTypes=true paths="./api/...;./controllers/..." output:crd:artifacts:config=config/crd/bases
	rm -f charts/streambench/crds/*.yaml && cp config/crd/bases/*.yaml charts/streambench/crds/
	cp config/rbac/role.yaml charts/streambench/files/manager-role.yaml

.PHONY: generate
generate: controller-gen ## Generate DeepCopy methods for the API types.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: docs-reference
# Both references are generated, never edited: the API's from the Go types'
# comments and markers (crd-ref-docs), the CLI's from the commands' own help
# (the hidden `streambench cli-reference`). hack/verify.sh fails when either is stale.
docs-reference: crd-ref-docs ## Generate docs/reference/api.md (from api/v1alpha1) and docs/reference/cli.md (from the commands' help).
	$(CRD_REF_DOCS) --config hack/crd-ref-docs/config.yaml --source-path api/v1alpha1 --renderer markdown --output-mode single --output-path docs/reference/api.md --log-level ERROR
	go run ./cmd/streambench cli-reference > docs/reference/cli.md

.PHONY: fmt
fmt: ## Run go fmt.
	@hack/timed.sh "go fmt" go fmt ./...

.PHONY: vet
vet: ## Run go vet.
	@hack/timed.sh "go vet" go vet ./...

.PHONY: lint
lint: golangci-lint ## Run golangci-lint.
	$(GOLANGCI_LINT) run

.PHONY: modules
modules: ## Download every pinned Go module (streambench's, with what its offline tidy reads, and hack/tools/').
	@hack/timed.sh "modules" bash -c 'hack/gomod-check.sh download . && for m in hack/tools/*/go.mod; do (cd "$${m%/go.mod}" && GOFLAGS=-mod=readonly go mod download); done'

.PHONY: verify
verify: ## Fail when the CRD, RBAC, deepcopy code, the API and CLI references or go.mod/go.sum (also hack/tools/*) are stale.
	@hack/timed.sh "verify generated files" bash -c '$(MAKE) --no-print-directory controller-gen crd-ref-docs >/dev/null && hack/verify.sh'

.PHONY: envtest
envtest: ## Build kube-apiserver and etcd from source into bin/k8s (first use only).
	@hack/timed.sh "envtest binaries" env K8S_VERSION=$(K8S_VERSION) ETCD_VERSION=$(ETCD_VERSION) hack/envtest-binaries.sh >/dev/null

# make test runs the suites in four stages, so that a cold machine's time is
# seen per stage: packages whose tests start real brokers (JVMs, jars from
# Maven Central on first use), of which the durability experiments apart,
# the report in headless Chromium, and the rest (unit tests and the
# envtest suite on a real kube-apiserver and etcd).
# hack/test-packages.sh sorts the packages by what their tests import.
#
# hack/go-test-stage.sh runs one stage (go test -vet=off: see there why).
GO_TEST_STAGE = env K8S_VERSION=$(K8S_VERSION) ETCD_VERSION=$(ETCD_VERSION) hack/go-test-stage.sh

# The order is CI's (.ci/run runs make test beside the cluster's builds
# and the e2e suite, which waits for make test's suites): the compile-bound
# checks (verify, fmt, vet) first, while kube-apiserver, which the suites
# need, is still being built; then the broker tests and, beside them, the
# unit and envtest suites (test-suites): the broker tests' JVMs mostly
# wait (1200 CPU-s in 1062 s on 2 cores, cold) and the unit suites use
# what they leave. Not niced: beside a CPU-bound neighbour at nice 0 (a
# shared CI machine) nice 10 starved them (315 CPU-s in 1446 s). Last
# only the report test and ko, which are short. Before, the unit suites,
# verify and vet ran after the broker tests, beside the e2e suite's first
# managed brokers, at a load of 16-20, where a Strimzi Kafka answered in
# 9 s and Prometheus got no sample of it.
.PHONY: test
test: modules prometheus verify fmt vet envtest test-suites test-report ko ## Run every test: the generated files, fmt and vet; real brokers beside the unit and envtest suites; the report in Chromium.

.PHONY: test-suites
test-suites: envtest prometheus ## The broker tests and, beside them, the unit and envtest suites.
	@$(MAKE) --no-print-directory test-unit & unit=$$!; \
	rc=0; $(MAKE) --no-print-directory test-brokers || rc=$$?; \
	wait $$unit || rc=$$?; exit $$rc

.PHONY: test-unit
# VERSITYGW_BIN: the archive tests' S3 server (internal/archive/archivetest),
# built by its own stage first so that the suites' time is their own.
test-unit: envtest versitygw ## Unit tests and the envtest suite (a real kube-apiserver and etcd; a real S3 server, versitygw).
	@hack/timed.sh "unit and envtest suites" bash -c 'set -euo pipefail; VERSITYGW_BIN="$$(VERSITYGW_VERSION=$(VERSITYGW_VERSION) hack/versitygw-binary.sh)"; export VERSITYGW_BIN; $(GO_TEST_STAGE) unit'

# The broker tests run as two stages at once: the durability experiments
# (hack/test-packages.sh experiments: their verdicts are timings through
# the sync shim) and the other broker packages, BROKER_TEST_PROCS at a
# time. .ci/run's e2e suite waits for the experiments and the unit suites,
# not for the other broker packages, which go on beside it: the machine's
# second core idled through their last 13 minutes in the cold run at
# a55b08e (the e2e suite waited 834 s for them), while the experiments
# read latencies that a busy neighbour moves. Their ports and jar caches are reserved
# across processes (internal/localbrokers), so more can run, but not
# faster here: three (cold run 10, the two durability experiments side by
# side too) kept a load of 17-19 and the sync-delay experiment ran out of
# its 12 minutes; beside the e2e suite, three with four e2e processes kept
# a load of 30-50.
BROKER_TEST_PROCS ?= 1
.PHONY: test-brokers
# (Each stage is a make target of its own: make runs a recipe line that
# names $(MAKE) even under -n, which internal/cicheck's make -n of the
# workflow's targets uses, so such a line must only call make.)
test-brokers: prometheus ## Integration tests against real Kafka and Pulsar brokers (local JVMs), some scraped by a real Prometheus; the durability experiments beside them.
	@$(MAKE) --no-print-directory test-experiments & exp=$$!; \
	rc=0; $(MAKE) --no-print-directory test-broker-packages || rc=$$?; \
	wait $$exp || rc=$$?; exit $$rc

.PHONY: test-broker-packages
test-broker-packages: prometheus ## The broker integration tests but the durability experiments, BROKER_TEST_PROCS packages at a time.
	@hack/timed.sh "broker integration tests" bash -c 'set -euo pipefail; PROMETHEUS_BIN="$$(PROMETHEUS_VERSION=$(PROMETHEUS_VERSION) hack/prometheus-binary.sh)"; export PROMETHEUS_BIN; $(GO_TEST_STAGE) brokers -p $(BROKER_TEST_PROCS)'

.PHONY: test-experiments
test-experiments: ## The durability experiments on real brokers: what each level's ack waits for (a sync, a stalled replica).
	@hack/timed.sh "durability experiments" $(GO_TEST_STAGE) experiments

.PHONY: prometheus
prometheus: ## Build Prometheus from source into bin/prometheus (first use only), for the monitoring test.
	@hack/timed.sh "prometheus binary" env PROMETHEUS_VERSION=$(PROMETHEUS_VERSION) hack/prometheus-binary.sh >/dev/null

.PHONY: versitygw
versitygw: ## Build versitygw (an S3 server) from source into bin/versitygw (first use only), for the archive tests.
	@hack/timed.sh "versitygw binary" env VERSITYGW_VERSION=$(VERSITYGW_VERSION) hack/versitygw-binary.sh >/dev/null

.PHONY: dashboards
dashboards: ## Regenerate the Grafana dashboards of the chart (charts/streambench/dashboards) from internal/dashboards.
	go test ./internal/dashboards -run TestChartDashboardsAreGenerated -update >/dev/null

.PHONY: test-report
test-report: ## The HTML report, rendered in headless Chromium (installed from Debian when missing).
	@hack/timed.sh "report test" $(GO_TEST_STAGE) report

.PHONY: ci-cold
ci-cold: ## Run .ci/run on a fresh clone with empty Go, build and jar caches; print each stage's time.
	hack/ci-cold.sh

##@ Build

.PHONY: build
build: generate fmt vet ## Build the streambench binary into bin/.
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o $(LOCALBIN)/streambench ./cmd/streambench

.PHONY: version
version: ## Print the version and commit a build of this tree records.
	@echo "$(VERSION) $(COMMIT)"

.PHONY: run
run: manifests generate ## Run the manager against the cluster of the current kubeconfig.
	go run ./cmd/streambench manager --operator-namespace=$${POD_NAMESPACE:-streambench-system}

.PHONY: ko-tarball
ko-tarball: ko ## Build the image E2E_IMG with ko, no Docker or registry, as an OCI tarball in bin/images/ (what local-cluster.sh load-image imports).
	go run ./hack/local-cluster/koimage -ko $(KO) -image $(E2E_IMG) -version $(VERSION) -commit $(COMMIT) -out $(LOCALBIN)/images/streambench.tar

.PHONY: ko-publish
ko-publish: ko ## Build the multi-arch release image with ko and push it to IMG's repository (the release workflow; needs a registry login).
	VERSION=$(VERSION) COMMIT=$(COMMIT) KO_DOCKER_REPO=$(firstword $(subst :, ,$(IMG))) $(KO) build ./cmd/streambench --bare \
		--platform=linux/amd64,linux/arm64 --tags=$(APP_VERSION) \
		--image-label=org.opencontainers.image.version=$(VERSION),org.opencontainers.image.revision=$(COMMIT),org.opencontainers.image.source=https://github.com/streambench/streambench-operator

.PHONY: docker-build
docker-build: ## Build the streambench image (needs a Docker engine).
	docker build --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) -t $(IMG) .

##@ Local

# The run and the workload of make quickstart; e.g. for Pulsar:
# make quickstart QUICKSTART_RUN=config/samples/run-ack2-async-pulsar.yaml
QUICKSTART_RUN ?= config/samples/run-ack2-async.yaml
QUICKSTART_WORKLOAD ?= workloads/latency-1-topic-16-partitions-1kb-local.yaml

.PHONY: quickstart
quickstart: ## Build streambench and run a local Kafka benchmark at durability level 2 (needs Java 17+, Maven).
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o $(LOCALBIN)/streambench ./cmd/streambench
	$(LOCALBIN)/streambench run -f $(QUICKSTART_RUN) --local --workload $(QUICKSTART_WORKLOAD)

##@ Deployment

.PHONY: install
install: manifests ## Install the CRD into the cluster of the current kubeconfig.
	kubectl apply --server-side -k config/crd

.PHONY: uninstall
uninstall: manifests ## Remove the CRD (and every BenchmarkRun) from the cluster.
	kubectl delete --ignore-not-found -k config/crd

.PHONY: deploy
deploy: manifests ## Deploy the operator (CRD, RBAC, manager) with image IMG.
	kubectl kustomize config/default | sed 's#ghcr.io/streambench/streambench:$(APP_VERSION)#$(IMG)#g' | kubectl apply --server-side -f -

.PHONY: undeploy
undeploy: ## Remove the operator from the cluster.
	kubectl delete --ignore-not-found -k config/default

##@ Tools

# go-install installs a pinned tool into bin/ once. .ci/run's lanes may ask
# for the same tool at the same moment: the second waits for the first's
# install and finds the binary, instead of writing over it.
define go-install
@mkdir -p $(LOCALBIN)
flock $(LOCALBIN)/.go-install.lock bash -c '[ -x $(1) ] || GOBIN=$(LOCALBIN) go install $(2)'
endef

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN) ## Install controller-gen into bin/.
$(CONTROLLER_GEN):
	$(call go-install,$(CONTROLLER_GEN),sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION))

.PHONY: crd-ref-docs
crd-ref-docs: $(CRD_REF_DOCS) ## Install crd-ref-docs (CRD_REF_DOCS_VERSION) into bin/.
$(CRD_REF_DOCS):
	$(call go-install,$(CRD_REF_DOCS),github.com/elastic/crd-ref-docs@$(CRD_REF_DOCS_VERSION))

.PHONY: golangci-lint
golangci-lint: $(GOLANGCI_LINT) ## Install golangci-lint into bin/.
$(GOLANGCI_LINT):
	$(call go-install,$(GOLANGCI_LINT),github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION))

.PHONY: ko
ko: $(KO) ## Install ko (KO_VERSION) into bin/.
$(KO):
	$(call go-install,$(KO),github.com/google/ko@$(KO_VERSION))

.PHONY: ginkgo
ginkgo: $(GINKGO) ## Install the ginkgo CLI into bin/.
$(GINKGO):
	$(call go-install,$(GINKGO),github.com/onsi/ginkgo/v2/ginkgo@$(GINKGO_VERSION))

##@ End to end

LOCAL_CLUSTER ?= hack/local-cluster/local-cluster.sh
E2E_IMG ?= docker.io/streambench/streambench:e2e
# The local cluster's kubeconfig unless another cluster is named.
E2E_KUBECONFIG ?= $(LOCALBIN)/local-cluster/kubeconfig
E2E_KUBECTL ?= $(shell [ -x $(LOCALBIN)/k8s/$(K8S_VERSION)/kubectl ] && echo $(LOCALBIN)/k8s/$(K8S_VERSION)/kubectl || echo kubectl)
# docs/on-a-cluster.md (README's "On a cluster" until issue 63) installs Strimzi from its release files; the suite
# takes the same files from here (the install/cluster-operator directory of
# Strimzi 1.2.0, kept unchanged in testdata/upstream).
E2E_STRIMZI_INSTALL ?= $(CURDIR)/testdata/upstream/strimzi-1.2.0
# The managed Kafka spec installs the Strimzi cluster operator from these
# install files: the same release's, as README's users do. `make test-e2e`
# imports the images hack/images/strimzi.sh builds from Strimzi 1.2.0's
# source into the local cluster under the names these files use; kind pulls
# Strimzi's own.
E2E_STRIMZI_OPERATOR ?= $(E2E_STRIMZI_INSTALL)
KIND_VERSION ?= v0.33.0
KIND ?= $(LOCALBIN)/kind
KIND_CLUSTER ?= streambench-e2e
KIND_KUBECONFIG ?= $(LOCALBIN)/kind-$(KIND_CLUSTER).kubeconfig
# kind v0.33.0's node image of the Kubernetes minor the project pins
# (K8S_VERSION 1.36.3: kind publishes 1.36's newest patch, 1.36.4), by the
# digest kind's release notes give.
KIND_NODE_IMAGE ?= kindest/node:v1.36.4@sha256:099e049362a1526b2db71494e1947aae99bd16290d7c895f2b7ea312e3cbfaed
# The operator image on kind: built by ko from .ko.yaml, as the release is,
# and loaded into the nodes by ko itself (KO_DOCKER_REPO=kind.local: no
# Docker image store, no `kind load`).
KIND_IMG ?= kind.local/streambench:e2e
# The managed Kafka specs on kind run Strimzi 1.2.0 from its own install
# files and images (quay.io), as README's users do.
KIND_STRIMZI_OPERATOR ?= $(CURDIR)/testdata/upstream/strimzi-1.2.0
# The specs of each kind job: the managed ones (a Strimzi or a Pulsar chart
# deployment each, image pulls) on a runner of their own.
KIND_LABELS ?= !managed
KIND_MANAGED_LABELS ?= managed
KIND_PROCS ?= 3
# Pods reach the runner, where the suite starts brokers and serves the
# Pulsar chart, at the gateway of Docker's kind network.
KIND_BROKER_HOST = $$(docker network inspect kind -f '{{range .IPAM.Config}}{{.Gateway}} {{end}}' | tr ' ' '\n' | grep -m1 '\.')
KIND_E2E_ENV = KUBECONFIG=$(KIND_KUBECONFIG) E2E_IMG=$(KIND_IMG) E2E_KUBECTL=kubectl E2E_BROKER_HOST=$(KIND_BROKER_HOST) \
	E2E_STRIMZI_INSTALL=$(E2E_STRIMZI_INSTALL) E2E_STRIMZI_OPERATOR=$(KIND_STRIMZI_OPERATOR)
KIND_GINKGO = $(GINKGO) run --tags='e2e e2e_managed' --procs=$(KIND_PROCS) --timeout=70m -v

.PHONY: cluster-binaries
cluster-binaries: ## Build the local cluster's Kubernetes binaries and CoreDNS from source (first use only).
	K8S_VERSION=$(K8S_VERSION) ETCD_VERSION=$(ETCD_VERSION) COREDNS_VERSION=$(COREDNS_VERSION) hack/local-cluster/build-binaries.sh >/dev/null

# How many nodes local-cluster-up starts: each a containerd, a kubelet and a
# bridge of its own on this machine (internal/localcluster).
LOCAL_CLUSTER_NODES ?= 1

.PHONY: local-cluster-up
local-cluster-up: ## Start a Kubernetes cluster of LOCAL_CLUSTER_NODES real nodes (default 1) built from source (root; no Docker).
	K8S_VERSION=$(K8S_VERSION) ETCD_VERSION=$(ETCD_VERSION) COREDNS_VERSION=$(COREDNS_VERSION) $(LOCAL_CLUSTER) up --nodes $(LOCAL_CLUSTER_NODES)

.PHONY: local-cluster-check-nodes
local-cluster-check-nodes: ## Prove the local cluster's nodes are nodes (placement, volumes, network, exec and logs on each, a kubelet stopped alone).
	K8S_VERSION=$(K8S_VERSION) $(LOCAL_CLUSTER) check-nodes

.PHONY: local-cluster-packages
local-cluster-packages: ## Install only what local-cluster-up installs with apt-get (containerd, runc, the CNI plugins).
	K8S_VERSION=$(K8S_VERSION) $(LOCAL_CLUSTER) packages

.PHONY: e2e-build
e2e-build: ginkgo ## Compile the e2e suite (into the Go build cache), so a later run starts at once.
	go test -tags e2e -c -o /dev/null ./test/e2e

.PHONY: local-cluster-down
local-cluster-down: ## Stop the local cluster: every process, pod, network and data it made.
	K8S_VERSION=$(K8S_VERSION) $(LOCAL_CLUSTER) down

# The e2e suite runs in E2E_PROCS parallel processes (the ginkgo CLI):
# its specs mostly wait (pods start, brokers start, workloads run at 200
# msg/s), so they share the machine; what bounds the count is the JVMs
# that start at once (three processes: the two managed containers and
# one for the rest). Each process has a namespace of its
# own; specs that own the cluster are Serial and run alone at the end;
# the longest containers are scheduled first (SpecPriority).
E2E_PROCS ?= 3
E2E_ENV = KUBECONFIG=$(E2E_KUBECONFIG) E2E_IMG=$(E2E_IMG) E2E_KUBECTL=$(E2E_KUBECTL) \
	E2E_STRIMZI_INSTALL=$(E2E_STRIMZI_INSTALL) E2E_STRIMZI_OPERATOR=$(E2E_STRIMZI_OPERATOR)
# Flags go before the package: the ginkgo CLI refuses a flag after it.
E2E_GINKGO = $(GINKGO) run --tags=e2e --procs=$(E2E_PROCS) --timeout=60m -v
# E2E_LOAD: the images the chosen specs need, imported into the local
# cluster when it is up: streambench's, and for the managed specs
# Strimzi's (built from source) and Pulsar's (each timed as its own stage).
E2E_LOAD = if K8S_VERSION=$(K8S_VERSION) $(LOCAL_CLUSTER) status >/dev/null 2>&1; then \
		E2E_IMG=$(E2E_IMG) K8S_VERSION=$(K8S_VERSION) $(LOCAL_CLUSTER) load-image $(if $(1),&& \
		hack/timed.sh "strimzi images" env K8S_VERSION=$(K8S_VERSION) $(LOCAL_CLUSTER) load-strimzi && \
		hack/timed.sh "pulsar image" env K8S_VERSION=$(K8S_VERSION) $(LOCAL_CLUSTER) load-pulsar); fi

.PHONY: test-e2e
test-e2e: ginkgo ## Run the e2e suite (test/e2e) on the local cluster, or on E2E_KUBECONFIG, but the managed Kafka and Pulsar specs (test-e2e-managed).
	@$(call E2E_LOAD,)
	$(E2E_ENV) $(E2E_GINKGO) --label-filter='!managed-kafka && !managed-pulsar' ./test/e2e

# E2E_MANAGED picks the specs: managed-kafka, managed-pulsar or both.
E2E_MANAGED ?= managed-kafka || managed-pulsar
.PHONY: test-e2e-managed
test-e2e-managed: ginkgo prometheus ## The managed specs: a real Strimzi operator (built from source) and the Apache Pulsar chart (images without Docker) deploy the brokers of runs on the local cluster.
	@$(call E2E_LOAD,managed)
	$(E2E_ENV) PROMETHEUS_BIN="$$(PROMETHEUS_VERSION=$(PROMETHEUS_VERSION) hack/prometheus-binary.sh)" \
		$(E2E_GINKGO) --label-filter='$(E2E_MANAGED)' ./test/e2e

# .ci/run runs the whole suite in one parallel run (test-e2e's specs and
# the managed ones side by side, one operator install for all).
.PHONY: test-e2e-all
test-e2e-all: ginkgo prometheus ## test-e2e and test-e2e-managed in one parallel run of the suite (what .ci/run runs).
	@$(call E2E_LOAD,managed)
	$(E2E_ENV) PROMETHEUS_BIN="$$(PROMETHEUS_VERSION=$(PROMETHEUS_VERSION) hack/prometheus-binary.sh)" \
		$(E2E_GINKGO) --label-filter='!managed || managed-kafka || managed-pulsar' ./test/e2e

.PHONY: kind-up
kind-up: $(KIND) ko ## Start the kind cluster KIND_CLUSTER (needs Docker) on KIND_NODE_IMAGE and load the operator image KIND_IMG into it with ko.
	$(KIND) get clusters | grep -qx $(KIND_CLUSTER) || $(KIND) create cluster --name $(KIND_CLUSTER) --image $(KIND_NODE_IMAGE) --config hack/kind/cluster.yaml --wait 3m
	@mkdir -p $(dir $(KIND_KUBECONFIG)) && $(KIND) get kubeconfig --name $(KIND_CLUSTER) > $(KIND_KUBECONFIG)
	KO_DOCKER_REPO=$(firstword $(subst :, ,$(KIND_IMG))) KIND_CLUSTER_NAME=$(KIND_CLUSTER) VERSION=$(VERSION) COMMIT=$(COMMIT) \
		$(KO) build ./cmd/streambench --bare --tags=$(lastword $(subst :, ,$(KIND_IMG)))

.PHONY: test-e2e-kind
test-e2e-kind: kind-up ginkgo ## Run the e2e suite's specs but the managed ones (KIND_LABELS) on a kind cluster (needs Docker).
	$(KIND_E2E_ENV) $(KIND_GINKGO) --label-filter='$(KIND_LABELS)' ./test/e2e

.PHONY: test-e2e-kind-managed
test-e2e-kind-managed: kind-up ginkgo ## The managed specs (KIND_MANAGED_LABELS: Strimzi 1.2.0 and the Pulsar chart, images pulled from their registries) on a kind cluster; needs Docker and the internet.
	$(KIND_E2E_ENV) $(KIND_GINKGO) --label-filter='$(KIND_MANAGED_LABELS)' ./test/e2e

$(KIND):
	GOBIN=$(LOCALBIN) go install sigs.k8s.io/kind@$(KIND_VERSION)
