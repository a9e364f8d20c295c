package e2e

// No build tag, as readme_test.go: without a cluster, config/samples-small
// renders, every BenchmarkRun in it is one the API server admits, and its
// pods fit three nodes of 4 cores and 8 GiB that are all broker nodes. The
// e2e suite takes its managed runs from the same rendering (smallSample),
// so the overlay a user applies is the one tested.

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/admission"
	"github.com/streambench/streambench-operator/internal/provision/nodefit"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
	"github.com/streambench/streambench-operator/internal/provision/workers"
)

// smallSamplesDir is the overlay of the samples for a small cluster, from
// the repository's root. It cannot be config/samples/small: kustomize
// refuses a base (config/samples) that contains its overlay.
const smallSamplesDir = "config/samples-small"

// renderSmallSamples is `kubectl kustomize config/samples-small` of the
// repository at root, with kustomize's own Go API (the version
// controller-runtime's dependencies already pin): the overlay's objects,
// one YAML document each, by name.
func renderSmallSamples(root string) (map[string][]byte, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(root, smallSamplesDir))
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", smallSamplesDir, err)
	}
	out := map[string][]byte{}
	for _, r := range m.Resources() {
		doc, err := r.AsYAML()
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", r.GetKind(), r.GetName(), err)
		}
		out[r.GetName()] = doc
	}
	return out, nil
}

// decodeSample decodes one rendered document as a BenchmarkRun, strictly:
// a field the API does not have is an error, as kubectl apply makes it.
func decodeSample(name string, doc []byte) (*v1alpha1.BenchmarkRun, error) {
	var run v1alpha1.BenchmarkRun
	if err := yaml.UnmarshalStrict(doc, &run); err != nil {
		return nil, fmt.Errorf("%s in %s: %w", name, smallSamplesDir, err)
	}
	return &run, nil
}

// The small cluster the overlay is for: three nodes of 4 cores and 8 GiB,
// each both a broker node and a client node, labelled for the samples'
// broker pool and, as the node-pool recipe does, tainted for it.
const (
	smallNodes     = 3
	smallNodeCPU   = "4"
	smallNodeMem   = "8Gi"
	smallVolumeMax = "10Gi"
)

func TestSmallSamplesFitThreeSmallNodes(t *testing.T) {
	root := filepath.Join("..", "..")
	docs, err := renderSmallSamples(root)
	if err != nil {
		t.Fatal(err)
	}
	base, err := filepath.Glob(filepath.Join(root, "config", "samples", "run-*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 || len(docs) > len(base) {
		t.Fatalf("%s renders %d objects; config/samples has %d runs", smallSamplesDir, len(docs), len(base))
	}
	chart := pulsarChartRequests(t, filepath.Join(root, "testdata", "upstream", "pulsar-chart-4.7.0", "values.yaml"))
	nodes := smallClusterNodes()
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			// What the API server admits (schema, defaults, CEL), then the
			// defaulted object as the operator reads it.
			obj, err := admission.Decode(doc)
			if err != nil {
				t.Fatal(err)
			}
			if errs := admission.BenchmarkRun().Create(obj); len(errs) > 0 {
				t.Fatalf("the API server would refuse %s: %v", name, errs.ToAggregate())
			}
			if _, err := decodeSample(name, doc); err != nil {
				t.Fatal(err)
			}
			var run v1alpha1.BenchmarkRun
			if err := admission.FromObject(obj, &run); err != nil {
				t.Fatal(err)
			}
			run.Namespace = "bench"

			parts := smallPods(t, &run, chart)
			var cpu, mem int64
			var sum []string
			for _, p := range parts {
				cpu += p.n * p.requests.Cpu().MilliValue()
				mem += p.n * p.requests.Memory().Value()
				sum = append(sum, fmt.Sprintf("%d × %s (%s, %s)", p.n, p.what, p.requests.Cpu(), p.requests.Memory()))
			}
			maxCPU, maxMem := resource.MustParse(smallNodeCPU), resource.MustParse(smallNodeMem)
			if cpu > maxCPU.MilliValue() || mem > maxMem.Value() {
				t.Errorf("%s requests %dm of CPU and %s of memory on its busiest node, more than a node of %s cores and %s: %s",
					name, cpu, resource.NewQuantity(mem, resource.BinarySI), smallNodeCPU, smallNodeMem, strings.Join(sum, " + "))
			}
			t.Logf("busiest node: %dm CPU, %s: %s", cpu, resource.NewQuantity(mem, resource.BinarySI), strings.Join(sum, " + "))

			for _, v := range smallVolumes(&run) {
				if v.Size != nil && v.Size.Cmp(resource.MustParse(smallVolumeMax)) > 0 {
					t.Errorf("%s claims a volume of %s: a small node's disk is a few GiB", name, v.Size)
				}
			}

			// Every node is a broker node and a client node: the brokers'
			// placement and the workers' both take each of them, whether
			// the nodes carry the recipe's taint or not.
			placements := map[string]v1alpha1.Placement{"spec.workers.placement": run.Spec.Workers.Placement}
			if m := run.Spec.Cluster.Managed; m != nil {
				placements["spec.cluster.managed.placement"] = m.Placement
			}
			for field, p := range placements {
				for _, n := range nodes {
					if !nodefit.Matches(p, &n, nodefit.AllTaints) {
						t.Errorf("%s: %s does not take node %s (labels %v, taints %v)", name, field, n.Name, n.Labels, n.Spec.Taints)
					}
				}
			}
		})
	}
}

// smallPod is n pods of one kind on one node, with their requests.
type smallPod struct {
	what     string
	n        int64
	requests corev1.ResourceList
}

// smallPods are the pods of run on its busiest node, counted the way the
// scheduler may place them: brokers and bookies, one per node under their
// required anti-affinity, ceil(replicas / nodes) each; everything else
// (ZooKeeper, autorecovery, the workers, the coordinator) all on that one
// node, as nothing keeps them apart.
func smallPods(t *testing.T, run *v1alpha1.BenchmarkRun, chart map[string]corev1.ResourceList) []smallPod {
	t.Helper()
	perNode := func(replicas int32) int64 { return int64(math.Ceil(float64(replicas) / smallNodes)) }
	var parts []smallPod
	if m := run.Spec.Cluster.Managed; m != nil {
		switch run.Spec.System {
		case v1alpha1.SystemKafka:
			parts = append(parts, smallPod{"Kafka broker", perNode(m.BrokersOrDefault()), strimzi.BrokerEnvelope(m).Resources.Requests})
		case v1alpha1.SystemPulsar:
			env := pulsar.EnvelopesOf(m)
			// A component the spec gives no resources gets the chart's.
			or := func(r corev1.ResourceList, component string) corev1.ResourceList {
				if len(r) == 0 {
					return chart[component]
				}
				return r
			}
			parts = append(parts,
				smallPod{"Pulsar broker", perNode(m.BrokersOrDefault()), or(env.Broker.Resources.Requests, "broker")},
				smallPod{"bookie", perNode(m.BookiesOrDefault()), or(env.Bookie.Resources.Requests, "bookkeeper")},
				smallPod{"ZooKeeper", int64(m.MetadataStoreReplicas), or(env.ZooKeeper.Resources.Requests, "zookeeper")},
				smallPod{"autorecovery", 1, chart["autorecovery"]})
		}
	}
	job := workers.WorkerJob(run, "streambench:test")
	parts = append(parts, smallPod{"worker", int64(run.Spec.Workers.Count), job.Spec.Template.Spec.Containers[0].Resources.Requests})
	coordinator, err := workers.CoordinatorJob(run, "streambench:test", v1alpha1.BrokerEndpoints{
		BootstrapServers: "brokers:9092", ServiceURL: "pulsar://brokers:6650", AdminURL: "http://brokers:8080"})
	if err != nil {
		t.Fatalf("the coordinator's Job: %v", err)
	}
	return append(parts, smallPod{"coordinator", 1, coordinator.Spec.Template.Spec.Containers[0].Resources.Requests})
}

// smallVolumes are the volumes run's managed cluster claims.
func smallVolumes(run *v1alpha1.BenchmarkRun) []v1alpha1.VolumeSpec {
	m := run.Spec.Cluster.Managed
	if m == nil {
		return nil
	}
	return append([]v1alpha1.VolumeSpec{m.Storage.Data, m.Storage.Journal, m.Storage.Ledgers, m.Storage.MetadataStore}, m.Storage.AdditionalData...)
}

// pulsarChartRequests are the requests the Pulsar chart's values give its
// components, which a run's pods get where the spec gives none.
func pulsarChartRequests(t *testing.T, file string) map[string]corev1.ResourceList {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// Only the components' resources are read; the chart's other values
	// are not corev1 types.
	var all map[string]any
	if err := yaml.Unmarshal(raw, &all); err != nil {
		t.Fatal(err)
	}
	out := map[string]corev1.ResourceList{}
	for _, c := range []string{"zookeeper", "bookkeeper", "autorecovery", "broker"} {
		js, err := yaml.Marshal(all[c])
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Resources corev1.ResourceRequirements `json:"resources"`
		}
		if err := yaml.Unmarshal(js, &v); err != nil {
			t.Fatalf("%s: %s.resources: %v", file, c, err)
		}
		if len(v.Resources.Requests) == 0 {
			t.Fatalf("%s: %s has no resources.requests", file, c)
		}
		out[c] = v.Resources.Requests
	}
	return out
}

// smallClusterNodes are the overlay's three nodes, each of 4 cores and 8
// GiB, labelled for the broker pool and tainted as the node-pool recipe
// does, and the same three untainted (a small cluster need not taint).
func smallClusterNodes() []corev1.Node {
	var nodes []corev1.Node
	for i := range smallNodes {
		for _, tainted := range []bool{true, false} {
			n := corev1.Node{}
			n.Name = fmt.Sprintf("node-%d", i+1)
			n.Labels = map[string]string{"kubernetes.io/hostname": n.Name, "node-pool": "streaming"}
			if tainted {
				n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "streaming", Effect: corev1.TaintEffectNoSchedule}}
			}
			n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(smallNodeCPU), corev1.ResourceMemory: resource.MustParse(smallNodeMem)}
			nodes = append(nodes, n)
		}
	}
	return nodes
}

// TestSmallSamplesPickOneByLabel: README's small-cluster command applies
// one run of the overlay with `-l streambench.io/sample=<name>`, so every
// run carries its own name in that label (one run per selector), and the
// run README names is one of them.
func TestSmallSamplesPickOneByLabel(t *testing.T) {
	root := filepath.Join("..", "..")
	docs, err := renderSmallSamples(root)
	if err != nil {
		t.Fatal(err)
	}
	const label = "streambench.io/sample"
	byLabel := map[string][]string{}
	for name, doc := range docs {
		run, err := decodeSample(name, doc)
		if err != nil {
			t.Fatal(err)
		}
		if got := run.Labels[label]; got != name {
			t.Errorf("%s in %s: label %s=%q, want its own name, so that -l %s=%s applies it alone", name, smallSamplesDir, label, got, label, name)
		}
		byLabel[run.Labels[label]] = append(byLabel[run.Labels[label]], name)
	}
	for v, names := range byLabel {
		if len(names) > 1 {
			t.Errorf("-l %s=%s picks %d runs (%v), want one", label, v, len(names), names)
		}
	}
	readme := repoFile(t, "README.md")
	const want = "kubectl apply -n kafka -k " + smallSamplesDir + " -l " + label + "="
	i := strings.Index(readme, want)
	if i < 0 {
		t.Fatalf("README has no %q", want)
	}
	picked, _, _ := strings.Cut(readme[i+len(want):], "\n")
	if len(byLabel[picked]) != 1 {
		t.Errorf("README applies -l %s=%s, which picks %v of the overlay, want one run", label, picked, byLabel[picked])
	}
}
