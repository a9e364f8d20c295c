package e2e

// This file has no build tag: `go test ./test/e2e/` (and make test) checks,
// without a cluster, that docs/on-a-cluster.md's "From zero to a result" is exactly the
// list of commands readme_e2e_test.go runs, so neither can change alone.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"sigs.k8s.io/yaml"
)

// readmeFile and readmeSection are the page and section whose commands the
// e2e suite runs: the README's "On a cluster" recipe, moved to
// docs/on-a-cluster.md when the README became a short front page (issue 63).
const (
	readmeFile    = "docs/on-a-cluster.md"
	readmeSection = "## From zero to a result"
)

// readmeCommands are that section's commands, in order; the e2e spec runs
// every one of them (the placeholders <nvme-node> and <client-node> become
// the test cluster's node).
var readmeCommands = []string{
	"curl -sLO https://github.com/strimzi/strimzi-kafka-operator/releases/download/1.2.0/strimzi-1.2.0.tar.gz",
	"tar xzf strimzi-1.2.0.tar.gz",
	"sed -i 's/namespace: .*/namespace: kafka/' strimzi-1.2.0/install/cluster-operator/*RoleBinding*.yaml",
	"kubectl create namespace kafka",
	"kubectl create -f strimzi-1.2.0/install/cluster-operator -n kafka",
	"helm install streambench charts/streambench --namespace streambench-system --create-namespace --wait",
	"kubectl label nodes <nvme-node> node-pool=streaming --overwrite",
	"kubectl taint nodes <nvme-node> dedicated=streaming:NoSchedule --overwrite",
	"kubectl label nodes <client-node> node-pool=clients --overwrite",
	"kubectl apply -f config/nodepool/storageclass-local-nvme.yaml",
	"sed 's/NVME_NODE/<nvme-node>/g' config/nodepool/local-nvme-pv.yaml | kubectl apply -f -",
	"kubectl apply -n kafka -f config/samples/run-ack2-async.yaml",
	"kubectl apply -n kafka -f config/samples/run-existing-kafka.yaml",
	"kubectl get br -n kafka -w",
	"streambench report -n kafka run-existing-kafka",
}

// readmeBlockCommands returns the commands of the sh blocks of a README
// section: every non-blank line that is not a comment.
func readmeBlockCommands(readme, section string) []string {
	_, rest, ok := strings.Cut(readme, "\n"+section+"\n")
	if !ok {
		return nil
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	var out []string
	in := false
	for _, line := range strings.Split(rest, "\n") {
		switch t := strings.TrimSpace(line); {
		case strings.HasPrefix(t, "```sh"):
			in = true
		case strings.HasPrefix(t, "```"):
			in = false
		case in && t != "" && !strings.HasPrefix(t, "#"):
			out = append(out, t)
		}
	}
	return out
}

func repoFile(t *testing.T, rel string) string {
	t.Helper()
	// go test runs in the package's folder (the build is -trimpath, so
	// runtime.Caller names no folder on disk).
	raw, err := os.ReadFile(filepath.Join("..", "..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func TestREADMEOnAClusterIsWhatTheSuiteRuns(t *testing.T) {
	got := readmeBlockCommands(repoFile(t, readmeFile), readmeSection)
	if len(got) == 0 {
		t.Fatalf("%s has no %q section with sh blocks", readmeFile, readmeSection)
	}
	if !slices.Equal(got, readmeCommands) {
		t.Fatalf("README's %q commands differ from the ones the e2e suite runs (test/e2e/readme_test.go readmeCommands, run by readme_e2e_test.go); change both:\nREADME:\n  %s\nsuite:\n  %s",
			readmeSection, strings.Join(got, "\n  "), strings.Join(readmeCommands, "\n  "))
	}
}

// TestNodePoolManifests: the StorageClass and the PV example are valid
// objects (strict: no misspelt field), the PV of class local-nvme once the
// node name is filled in as the README's sed does.
func TestNodePoolManifests(t *testing.T) {
	var sc storagev1.StorageClass
	if err := yaml.UnmarshalStrict([]byte(repoFile(t, "config/nodepool/storageclass-local-nvme.yaml")), &sc); err != nil {
		t.Fatal(err)
	}
	if sc.Name != "local-nvme" || sc.VolumeBindingMode == nil || *sc.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer {
		t.Fatalf("StorageClass %s, binding %v: the samples ask for local-nvme, bound when the pod is scheduled", sc.Name, sc.VolumeBindingMode)
	}
	var pv corev1.PersistentVolume
	raw := strings.ReplaceAll(repoFile(t, "config/nodepool/local-nvme-pv.yaml"), "NVME_NODE", "node-1")
	if err := yaml.UnmarshalStrict([]byte(raw), &pv); err != nil {
		t.Fatal(err)
	}
	if pv.Spec.StorageClassName != "local-nvme" || pv.Spec.Local == nil || pv.Spec.NodeAffinity == nil ||
		pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values[0] != "node-1" || pv.Name != "local-nvme-node-1-nvme0" ||
		// A path per node: nodes that share one host (kind, the local
		// cluster) must not share one directory as their disk.
		pv.Spec.Local.Path != "/mnt/nvme0/node-1" {
		t.Fatalf("PV %+v", pv)
	}
}
