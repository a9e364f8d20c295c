package strimzi

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/envelope"
)

// DefaultDataSize is the size of a broker's data volume when
// spec.cluster.managed.storage.data.size is not set.
var DefaultDataSize = resource.MustParse("100Gi")

// Private mirrors of the parts of Strimzi's KafkaNodePool schema set here.
type nodePoolSpec struct {
	Replicas  int32                        `json:"replicas"`
	Roles     []string                     `json:"roles"`
	Storage   jbodStorage                  `json:"storage"`
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// JVMOptions are Strimzi's jvmOptions: "-Xms" and "-Xmx" set, Strimzi
	// sizes no heap of its own.
	JVMOptions map[string]string `json:"jvmOptions,omitempty"`
	Template   *nodePoolTemplate `json:"template,omitempty"`
}

type jbodStorage struct {
	Type    string       `json:"type"`
	Volumes []jbodVolume `json:"volumes"`
}

type jbodVolume struct {
	ID            int32  `json:"id"`
	Type          string `json:"type"`
	Size          string `json:"size"`
	Class         string `json:"class,omitempty"`
	DeleteClaim   bool   `json:"deleteClaim"`
	KRaftMetadata string `json:"kraftMetadata,omitempty"`
}

type nodePoolTemplate struct {
	Pod *podTemplate `json:"pod,omitempty"`
}

type podTemplate struct {
	Affinity    *corev1.Affinity    `json:"affinity,omitempty"`
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// NodePools builds the run's KafkaNodePools: one pool, PoolName(run), of
// spec.cluster.managed.brokers nodes that are both KRaft controllers and
// brokers.
//
// Why combined roles rather than a separate 3-node controller pool:
//   - the API has no controller settings (count, resources, placement;
//     metadataStoreReplicas is Pulsar's), so a controller pool would run
//     on invented defaults, and take 3 more pods per run on the node pool
//     sized for the brokers under test;
//   - a benchmark cluster lives for one run: isolating controllers pays
//     off in the failure domains of long-lived clusters, while during a
//     run the metadata log sees only topic creation and ISR changes, so
//     sharing the data volume (kraftMetadata: shared) leaves the measured
//     write path alone;
//   - the quorum is every broker, which is 3 in every study's setup (docs/methodology.md); for much
//     larger clusters (7+ brokers) a dedicated pool would keep the quorum
//     small, and is the change to make if such runs appear.
func NodePools(run *v1alpha1.BenchmarkRun) ([]*unstructured.Unstructured, error) {
	m, err := managed(run)
	if err != nil {
		return nil, err
	}
	data := m.Storage.Data
	size := DefaultDataSize
	if data.Size != nil {
		size = *data.Size
	}
	if size.Sign() <= 0 {
		return nil, fmt.Errorf("spec.cluster.managed.storage.data.size (%s) must be positive; set a size such as 100Gi or remove it for the default %s", size.String(), DefaultDataSize.String())
	}
	volume := jbodVolume{
		ID:   0,
		Type: "persistent-claim",
		Size: size.String(),
		// Strimzi's default is false (claims outlive the cluster); the
		// API's is true, so the PVCs of a finished run do not pin NVMe
		// disks of the pool.
		DeleteClaim:   m.Storage.DeleteClaim == nil || *m.Storage.DeleteClaim,
		KRaftMetadata: "shared",
	}
	if data.StorageClassName != nil {
		volume.Class = *data.StorageClassName
	}

	volumes := []jbodVolume{volume}
	// More log directories: Kafka spreads partitions over them, so a broker
	// writes to as many disks as a bookie (journal + ledgers) does. The
	// metadata log stays on volume 0.
	for i, extra := range m.Storage.AdditionalData {
		v := volume
		v.ID, v.KRaftMetadata = int32(i+1), ""
		if extra.Size != nil {
			if extra.Size.Sign() <= 0 {
				return nil, fmt.Errorf("spec.cluster.managed.storage.additionalData[%d].size (%s) must be positive; set a size such as 100Gi or remove it to use data's size", i, extra.Size.String())
			}
			v.Size = extra.Size.String()
		}
		if extra.StorageClassName != nil {
			v.Class = *extra.StorageClassName
		}
		volumes = append(volumes, v)
	}

	spec := nodePoolSpec{
		Replicas: brokerCount(m),
		Roles:    []string{"controller", "broker"},
		Storage:  jbodStorage{Type: "jbod", Volumes: volumes},
	}
	// The envelope (internal/provision/envelope): the memory limit is the
	// request when only a request is given, and the heap is explicit, as
	// the Pulsar twin's PULSAR_MEM is.
	env := BrokerEnvelope(m)
	if r := env.Resources; len(r.Limits) > 0 || len(r.Requests) > 0 || len(r.Claims) > 0 {
		spec.Resources = r.DeepCopy()
	}
	if env.HeapBytes > 0 {
		heap := fmt.Sprintf("%dm", envelope.MiB(env.HeapBytes))
		spec.JVMOptions = map[string]string{"-Xms": heap, "-Xmx": heap}
	}
	affinity := withBrokerAntiAffinity(affinityWithNodeSelector(m.Placement.Affinity, m.Placement.NodeSelector), ClusterName(run))
	pod := &podTemplate{Affinity: affinity}
	for _, t := range m.Placement.Tolerations {
		pod.Tolerations = append(pod.Tolerations, *t.DeepCopy())
	}
	spec.Template = &nodePoolTemplate{Pod: pod}

	lbls := labels(run)
	lbls[LabelCluster] = ClusterName(run)
	pool, err := newObject(KafkaNodePoolGVK, PoolName(run), run.Namespace, lbls, &spec)
	if err != nil {
		return nil, err
	}
	return []*unstructured.Unstructured{pool}, nil
}

// podLabelBrokerRole is the label Strimzi puts on the pods of a Kafka
// cluster's broker nodes (io.strimzi.operator.common.model.Labels), beside
// LabelCluster.
const podLabelBrokerRole = "strimzi.io/broker-role"

// BrokerPodLabels select the broker pods Strimzi runs for cluster.
func BrokerPodLabels(cluster string) map[string]string {
	return map[string]string{LabelCluster: cluster, podLabelBrokerRole: "true"}
}

// withBrokerAntiAffinity adds a required pod anti-affinity that keeps two
// brokers of cluster off one node (kubernetes.io/hostname). Strimzi adds
// none of its own, and two replicas on one machine would make "replicated
// to N machines before the ack" untrue without anyone noticing; a
// pool with more brokers than nodes leaves the extra pods Pending, which
// the run reports, rather than doubling them up. The given affinity is
// not changed.
func withBrokerAntiAffinity(affinity *corev1.Affinity, cluster string) *corev1.Affinity {
	out := affinity.DeepCopy()
	if out == nil {
		out = &corev1.Affinity{}
	}
	if out.PodAntiAffinity == nil {
		out.PodAntiAffinity = &corev1.PodAntiAffinity{}
	}
	out.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(out.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
		corev1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{MatchLabels: BrokerPodLabels(cluster)},
			TopologyKey:   corev1.LabelHostname,
		})
	return out
}

// affinityWithNodeSelector returns affinity with nodeSelector folded in as
// a required node affinity, or nil when both are empty. Strimzi's pod
// template has no nodeSelector field, only affinity.
//
// A pod's nodeSelector and its required node affinity must both hold.
// Required nodeSelectorTerms are ORed and the expressions inside one term
// ANDed, so the selector's expressions are added to every existing term
// ((A or B) and S == (A and S) or (B and S)), or form the only term when
// there is none. The run's affinity is copied, never changed.
func affinityWithNodeSelector(affinity *corev1.Affinity, nodeSelector map[string]string) *corev1.Affinity {
	if len(nodeSelector) == 0 {
		return affinity.DeepCopy()
	}
	out := affinity.DeepCopy()
	if out == nil {
		out = &corev1.Affinity{}
	}
	if out.NodeAffinity == nil {
		out.NodeAffinity = &corev1.NodeAffinity{}
	}
	required := out.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if required == nil {
		required = &corev1.NodeSelector{}
		out.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = required
	}
	var exprs []corev1.NodeSelectorRequirement
	for _, k := range slices.Sorted(maps.Keys(nodeSelector)) {
		exprs = append(exprs, corev1.NodeSelectorRequirement{
			Key:      k,
			Operator: corev1.NodeSelectorOpIn,
			Values:   []string{nodeSelector[k]},
		})
	}
	if len(required.NodeSelectorTerms) == 0 {
		required.NodeSelectorTerms = []corev1.NodeSelectorTerm{{MatchExpressions: exprs}}
		return out
	}
	for i := range required.NodeSelectorTerms {
		t := &required.NodeSelectorTerms[i]
		t.MatchExpressions = append(t.MatchExpressions, exprs...)
	}
	return out
}

// BrokerEnvelope is what each Kafka broker pod of a managed run gets.
func BrokerEnvelope(m *v1alpha1.ManagedCluster) envelope.Envelope {
	return envelope.Of(envelope.KafkaBroker, m.Resources.Broker)
}
