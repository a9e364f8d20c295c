package strimzi

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// nvmeAffinity is a run's own affinity: two alternative node terms (zone,
// or instance type) and a pod anti-affinity that must survive untouched.
func nvmeAffinity() *corev1.Affinity {
	return &corev1.Affinity{
		NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
				{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}}}},
				{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "node.kubernetes.io/instance-type", Operator: corev1.NodeSelectorOpIn, Values: []string{"i3en.2xlarge"}}}},
			}},
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
				Weight:     10,
				Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpExists}}},
			}},
		},
		PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				TopologyKey:   "kubernetes.io/hostname",
				LabelSelector: nil,
			}},
		},
	}
}

func TestNodePools(t *testing.T) {
	tests := []struct {
		name string
		run  *v1alpha1.BenchmarkRun
		want string
	}{
		{
			// Brokers never share a node: Strimzi adds no anti-affinity of
			// its own.
			name: "default managed cluster",
			run:  newRun(),
			want: `
apiVersion: kafka.strimzi.io/v1
kind: KafkaNodePool
metadata:
  name: broker-66b1eb
  namespace: bench
  labels:
    app.kubernetes.io/managed-by: streambench
    streambench.io/run: run-a
    strimzi.io/cluster: run-a
spec:
  replicas: 3
  roles: [controller, broker]
  storage:
    type: jbod
    volumes:
    - {id: 0, type: persistent-claim, size: 100Gi, deleteClaim: true, kraftMetadata: shared}
  template:
    pod:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector:
              matchLabels: {strimzi.io/broker-role: "true", strimzi.io/cluster: run-a}
            topologyKey: kubernetes.io/hostname
`,
		},
		{
			// The sample's NVMe pool: a node selector and a taint, plus an
			// affinity of the run's own. The selector joins every required
			// term (terms are ORed), in sorted key order.
			name: "NVMe placement with nodeSelector, tolerations and existing affinity",
			run: newRun(func(r *v1alpha1.BenchmarkRun) {
				m := r.Spec.Cluster.Managed
				m.Placement = v1alpha1.Placement{
					NodeSelector: map[string]string{"node-pool": "kafka", "disk": "nvme"},
					Affinity:     nvmeAffinity(),
					Tolerations: []corev1.Toleration{
						{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "kafka", Effect: corev1.TaintEffectNoSchedule},
						{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(30))},
					},
				}
				m.Resources.Broker = corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("6"), corev1.ResourceMemory: resource.MustParse("48Gi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("48Gi")},
				}
				m.Storage.Data = v1alpha1.VolumeSpec{StorageClassName: ptr.To("local-nvme"), Size: ptr.To(resource.MustParse("1Ti"))}
			}),
			want: `
apiVersion: kafka.strimzi.io/v1
kind: KafkaNodePool
metadata:
  name: broker-66b1eb
  namespace: bench
  labels:
    app.kubernetes.io/managed-by: streambench
    streambench.io/run: run-a
    strimzi.io/cluster: run-a
spec:
  replicas: 3
  roles: [controller, broker]
  storage:
    type: jbod
    volumes:
    - {id: 0, type: persistent-claim, size: 1Ti, class: local-nvme, deleteClaim: true, kraftMetadata: shared}
  resources:
    requests: {cpu: "6", memory: 48Gi}
    limits: {memory: 48Gi}
  # Half the limit, capped at 5 GiB: explicit, so Strimzi sizes nothing.
  jvmOptions: {"-Xms": 5120m, "-Xmx": 5120m}
  template:
    pod:
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: topology.kubernetes.io/zone, operator: In, values: [a, b]}
              - {key: disk, operator: In, values: [nvme]}
              - {key: node-pool, operator: In, values: [kafka]}
            - matchExpressions:
              - {key: node.kubernetes.io/instance-type, operator: In, values: [i3en.2xlarge]}
              - {key: disk, operator: In, values: [nvme]}
              - {key: node-pool, operator: In, values: [kafka]}
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 10
            preference:
              matchExpressions:
              - {key: disk, operator: Exists}
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - topologyKey: kubernetes.io/hostname
          - labelSelector:
              matchLabels: {strimzi.io/broker-role: "true", strimzi.io/cluster: run-a}
            topologyKey: kubernetes.io/hostname
      tolerations:
      - {key: dedicated, operator: Equal, value: kafka, effect: NoSchedule}
      - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 30}
`,
		},
		{
			name: "JBOD: two more log directories, one on another class and size",
			run: newRun(func(r *v1alpha1.BenchmarkRun) {
				m := r.Spec.Cluster.Managed
				m.Storage.Data = v1alpha1.VolumeSpec{StorageClassName: ptr.To("local-nvme"), Size: ptr.To(resource.MustParse("1Ti"))}
				m.Storage.AdditionalData = []v1alpha1.VolumeSpec{
					{StorageClassName: ptr.To("local-nvme")},
					{StorageClassName: ptr.To("gp3"), Size: ptr.To(resource.MustParse("500Gi"))},
				}
			}),
			want: `
apiVersion: kafka.strimzi.io/v1
kind: KafkaNodePool
metadata:
  name: broker-66b1eb
  namespace: bench
  labels:
    app.kubernetes.io/managed-by: streambench
    streambench.io/run: run-a
    strimzi.io/cluster: run-a
spec:
  replicas: 3
  roles: [controller, broker]
  storage:
    type: jbod
    volumes:
    - {id: 0, type: persistent-claim, size: 1Ti, class: local-nvme, deleteClaim: true, kraftMetadata: shared}
    - {id: 1, type: persistent-claim, size: 1Ti, class: local-nvme, deleteClaim: true}
    - {id: 2, type: persistent-claim, size: 500Gi, class: gp3, deleteClaim: true}
  template:
    pod:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector:
              matchLabels: {strimzi.io/broker-role: "true", strimzi.io/cluster: run-a}
            topologyKey: kubernetes.io/hostname
`,
		},
		{
			name: "nodeSelector alone becomes the only required term",
			run: newRun(func(r *v1alpha1.BenchmarkRun) {
				r.Spec.Cluster.Managed.Placement.NodeSelector = map[string]string{"node-pool": "kafka"}
			}),
			want: `
apiVersion: kafka.strimzi.io/v1
kind: KafkaNodePool
metadata:
  name: broker-66b1eb
  namespace: bench
  labels:
    app.kubernetes.io/managed-by: streambench
    streambench.io/run: run-a
    strimzi.io/cluster: run-a
spec:
  replicas: 3
  roles: [controller, broker]
  storage:
    type: jbod
    volumes:
    - {id: 0, type: persistent-claim, size: 100Gi, deleteClaim: true, kraftMetadata: shared}
  template:
    pod:
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: node-pool, operator: In, values: [kafka]}
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector:
              matchLabels: {strimzi.io/broker-role: "true", strimzi.io/cluster: run-a}
            topologyKey: kubernetes.io/hostname
`,
		},
		{
			name: "affinity without nodeSelector passes through; tolerations alone",
			run: newRun(func(r *v1alpha1.BenchmarkRun) {
				r.Spec.Cluster.Managed.Placement.Affinity = &corev1.Affinity{PodAntiAffinity: nvmeAffinity().PodAntiAffinity}
				r.Spec.Cluster.Managed.Placement.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
			}),
			want: `
apiVersion: kafka.strimzi.io/v1
kind: KafkaNodePool
metadata:
  name: broker-66b1eb
  namespace: bench
  labels:
    app.kubernetes.io/managed-by: streambench
    streambench.io/run: run-a
    strimzi.io/cluster: run-a
spec:
  replicas: 3
  roles: [controller, broker]
  storage:
    type: jbod
    volumes:
    - {id: 0, type: persistent-claim, size: 100Gi, deleteClaim: true, kraftMetadata: shared}
  template:
    pod:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - topologyKey: kubernetes.io/hostname
          - labelSelector:
              matchLabels: {strimzi.io/broker-role: "true", strimzi.io/cluster: run-a}
            topologyKey: kubernetes.io/hostname
      tolerations:
      - {key: dedicated, operator: Exists}
`,
		},
		{
			name: "custom storage kept after teardown, five brokers, long run name",
			run: newRun(func(r *v1alpha1.BenchmarkRun) {
				r.Name = "kafka-level1-1topic-100partitions-abcde"
				m := r.Spec.Cluster.Managed
				m.Brokers = 5
				m.Storage = v1alpha1.StorageSpec{
					Data:        v1alpha1.VolumeSpec{StorageClassName: ptr.To("topolvm-nvme"), Size: ptr.To(resource.MustParse("500Gi"))},
					DeleteClaim: ptr.To(false),
				}
				m.Resources.Broker = corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3500m")},
				}
			}),
			want: `
apiVersion: kafka.strimzi.io/v1
kind: KafkaNodePool
metadata:
  name: broker-850157
  namespace: bench
  labels:
    app.kubernetes.io/managed-by: streambench
    streambench.io/run: kafka-level1-1topic-100partitions-abcde
    strimzi.io/cluster: kafka-level1-1topic-c0b62577
spec:
  replicas: 5
  roles: [controller, broker]
  storage:
    type: jbod
    volumes:
    - {id: 0, type: persistent-claim, size: 500Gi, class: topolvm-nvme, deleteClaim: false, kraftMetadata: shared}
  resources:
    requests: {cpu: 3500m}
  template:
    pod:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector:
              matchLabels: {strimzi.io/broker-role: "true", strimzi.io/cluster: kafka-level1-1topic-c0b62577}
            topologyKey: kubernetes.io/hostname
`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.run.DeepCopy()
			pools, err := NodePools(tc.run)
			if err != nil {
				t.Fatalf("NodePools: %v", err)
			}
			if len(pools) != 1 {
				t.Fatalf("got %d pools, want 1", len(pools))
			}
			assertObject(t, pools[0], tc.want)
			assertClientSafe(t, pools[0])
			if refs := pools[0].GetOwnerReferences(); len(refs) != 0 {
				t.Errorf("owner references %v: the controller sets them, not the builder", refs)
			}
			// The selector is merged into a copy; the run's own affinity
			// (shared with the cache) must not change.
			if diff := cmp.Diff(before, tc.run); diff != "" {
				t.Errorf("NodePools changed the run (-before +after):\n%s", diff)
			}
		})
	}
}

// The pool must name the Kafka the Kafka builder names, or Strimzi ignores it.
func TestNodePoolBelongsToKafka(t *testing.T) {
	for _, name := range []string{"run-a", "Run.With.Dots", "a-very-long-run-name-that-needs-a-shorter-cluster"} {
		run := newRun(func(r *v1alpha1.BenchmarkRun) { r.Name = name })
		kafka, err := Kafka(run, translate(t, run))
		if err != nil {
			t.Fatal(err)
		}
		pools, err := NodePools(run)
		if err != nil {
			t.Fatal(err)
		}
		if got := pools[0].GetLabels()[LabelCluster]; got != kafka.GetName() {
			t.Errorf("%s: pool label %s=%q, Kafka is %q", name, LabelCluster, got, kafka.GetName())
		}
		if pools[0].GetNamespace() != kafka.GetNamespace() {
			t.Errorf("%s: pool in %q, Kafka in %q", name, pools[0].GetNamespace(), kafka.GetNamespace())
		}
	}
}

func TestNodePoolsErrors(t *testing.T) {
	tests := []struct {
		name string
		run  *v1alpha1.BenchmarkRun
		want string
	}{
		{
			name: "zero size",
			run: newRun(func(r *v1alpha1.BenchmarkRun) {
				r.Spec.Cluster.Managed.Storage.Data.Size = ptr.To(resource.MustParse("0"))
			}),
			want: "spec.cluster.managed.storage.data.size (0) must be positive",
		},
		{
			name: "zero size of an additional log directory",
			run: newRun(func(r *v1alpha1.BenchmarkRun) {
				r.Spec.Cluster.Managed.Storage.AdditionalData = []v1alpha1.VolumeSpec{{}, {Size: ptr.To(resource.MustParse("0"))}}
			}),
			want: "spec.cluster.managed.storage.additionalData[1].size (0) must be positive",
		},
		{
			name: "existing cluster",
			run: newRun(func(r *v1alpha1.BenchmarkRun) {
				r.Spec.Cluster = v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{BootstrapServers: "k:9092"}}
			}),
			want: "spec.cluster.managed is not set",
		},
		{
			name: "pulsar run",
			run:  newRun(func(r *v1alpha1.BenchmarkRun) { r.Spec.System = v1alpha1.SystemPulsar }),
			want: `spec.system is "pulsar"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pools, err := NodePools(tc.run)
			if err == nil {
				t.Fatalf("NodePools succeeded, want an error; got %d pools", len(pools))
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}
