package strimzi

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision"
)

// Strimzi's API group, version and kinds. Strimzi 1.0 removed v1beta2;
// v1 is the only version served.
const (
	Group             = "kafka.strimzi.io"
	Version           = "v1"
	KindKafka         = "Kafka"
	KindKafkaNodePool = "KafkaNodePool"
	KindKafkaUser     = "KafkaUser"
)

// GroupVersion and the kinds' GroupVersionKinds, for unstructured objects
// and RESTMapper look-ups.
var (
	GroupVersion     = schema.GroupVersion{Group: Group, Version: Version}
	KafkaGVK         = GroupVersion.WithKind(KindKafka)
	KafkaNodePoolGVK = GroupVersion.WithKind(KindKafkaNodePool)
	KafkaUserGVK     = GroupVersion.WithKind(KindKafkaUser)
	// PodSetGVK is the kind of the objects whose pods Strimzi's cluster
	// operator makes: a node pool's brokers are the pods of its
	// StrimziPodSet (core.strimzi.io, v1 as Strimzi 1.x serves it), which
	// is their controller and is owned by the KafkaNodePool.
	PodSetGVK = schema.GroupVersionKind{Group: "core.strimzi.io", Version: "v1", Kind: "StrimziPodSet"}
)

// Labels on every object built here.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "streambench"
	// LabelRun carries the run's name; the same key as the results
	// ConfigMap's (internal/results.LabelRun). Strimzi copies a Kafka's
	// labels to the pods and services it creates, so the brokers carry it
	// too.
	LabelRun = "streambench.io/run"
	// LabelCluster ties a KafkaNodePool to its Kafka; Strimzi ignores
	// pools without it.
	LabelCluster = "strimzi.io/cluster"
	// LabelKind is the kind of the resource Strimzi made a pod for
	// ("Kafka" on a cluster's brokers and controllers).
	LabelKind = "strimzi.io/kind"
)

// The run's listener: internal, plaintext, the port Kafka clients expect.
const (
	ListenerName = "plain"
	ListenerPort = 9092
)

// The run's listener when spec.cluster.managed.security.tls is set:
// internal, TLS with Strimzi's cluster CA, on the port and under the name
// Strimzi's own examples give a TLS listener, so the brokers look like the
// clusters users run. A run has one listener: its clients are the only
// ones, and a second would be a second set of network threads.
const (
	TLSListenerName = "tls"
	TLSListenerPort = 9093
)

// MaxClusterNameLength bounds ClusterName. Strimzi derives names from the
// Kafka's and the pool's: pods are <cluster>-<pool>-<node id> and their
// name is also their hostname, a DNS label of at most 63 characters. With
// the pool named by role and a short hash (see PoolName), 28 + 1 + 13 + 1
// leaves room for any node id; 28 also keeps <cluster>-kafka-bootstrap and
// <cluster>-kafka-brokers (Service names, 63 at most) well inside the limit.
const MaxClusterNameLength = 28

// ClusterName is the name of the run's Kafka. It is the run's name when
// that name is a DNS-1035 label (what Strimzi's Service names need: lower
// case alphanumerics and '-', starting with a letter) of at most
// MaxClusterNameLength characters. Any other name is sanitized and cut,
// and gets the first 8 hex digits of its SHA-256, so two runs never share
// a cluster and the same run always gets the same one.
func ClusterName(run *v1alpha1.BenchmarkRun) string {
	return provision.DNSLabel(run.Name, MaxClusterNameLength, 8)
}

// PoolRole is the role PoolName starts with: the pool's nodes are the
// brokers (each one also a KRaft controller: NodePools says why one
// combined pool), and "broker" is what a fault target calls them
// (broker-<node id>), so a pod reads <cluster>-broker-<hash>-<node id>.
const PoolRole = "broker"

// poolHashDigits is how many hex digits of the cluster name's SHA-256
// PoolName carries.
const poolHashDigits = 6

// PoolName is the name of the run's KafkaNodePool: PoolRole and the first
// 6 hex digits of the SHA-256 of ClusterName(run), e.g. broker-1f0c3a, so
// that pods read <cluster>-broker-1f0c3a-0 (run-ack2-async-broker-1f0c3a-0)
// and not the cluster's name twice, as they did when the pool took it
// (run-ack2-async-run-ack2-async-0).
//
// The pool cannot be named by its role alone: a KafkaNodePool is a
// namespaced object, so a second run's pool "broker" in the same
// namespace would be the first run's. Nor can the cluster's name be
// shortened instead: the Kafka is namespaced too, and its name is the
// one users read in Services (<cluster>-kafka-bootstrap). So the pod name
// holds the run's readable name once (the cluster's) and a short digest
// that keeps the pool apart. Two clusters alive at once in a namespace
// share a digest once in 16.7 million pairs; then the second run's create
// finds a pool it does not control and fails at once, naming the pool
// ("rename the run"; createOwned in controllers), never taking the other's.
func PoolName(run *v1alpha1.BenchmarkRun) string {
	sum := sha256.Sum256([]byte(ClusterName(run)))
	return PoolRole + "-" + hex.EncodeToString(sum[:])[:poolHashDigits]
}

// PodSetName is the name of the StrimziPodSet that makes the pods of the
// run's node pool: <cluster>-<pool>, the prefix of its pods' names.
func PodSetName(run *v1alpha1.BenchmarkRun) string { return ClusterName(run) + "-" + PoolName(run) }

// UserName is the name of the run's KafkaUser, which is also the SCRAM
// user name, the CN of its client certificate, and the name of the Secret
// the User Operator writes its credentials to (no secretPrefix). The
// suffix keeps it apart from the Secrets Strimzi names after the cluster
// and its pods (<cluster>-cluster-ca-cert, <cluster>-<pool>-<id>).
func UserName(run *v1alpha1.BenchmarkRun) string { return ClusterName(run) + "-client" }

// MetricsConfigMapName is the name of the ConfigMap with the JMX
// Prometheus exporter rules. Strimzi reads it from the Kafka's namespace.
func MetricsConfigMapName(run *v1alpha1.BenchmarkRun) string {
	return ClusterName(run) + "-metrics"
}

// labels are the labels of every object of the run.
func labels(run *v1alpha1.BenchmarkRun) map[string]string {
	return map[string]string{
		LabelManagedBy: ManagedBy,
		LabelRun:       run.Name,
	}
}

// CRDsInstalled checks that the API server serves Strimzi's v1 Kafka and
// KafkaNodePool, so a managed run fails early with a fix instead of a
// "no matches for kind" from the first create.
func CRDsInstalled(mapper meta.RESTMapper) error {
	return crdsInstalled(mapper, KafkaGVK, KafkaNodePoolGVK)
}

// KafkaUserCRDInstalled checks that the API server serves Strimzi's v1
// KafkaUser, for a run whose clients authenticate as one (NeedsUser).
func KafkaUserCRDInstalled(mapper meta.RESTMapper) error {
	return crdsInstalled(mapper, KafkaUserGVK)
}

func crdsInstalled(mapper meta.RESTMapper, gvks ...schema.GroupVersionKind) error {
	for _, gvk := range gvks {
		_, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err == nil {
			continue
		}
		if !meta.IsNoMatchError(err) {
			return fmt.Errorf("looking up the %s/%s %s CRD: %w", Group, Version, gvk.Kind, err)
		}
		// Strimzi 0.x serves only v1beta2: say so, the fix is an upgrade.
		if old, oldErr := mapper.RESTMapping(gvk.GroupKind()); oldErr == nil {
			return fmt.Errorf("Strimzi is too old: the API server serves %s %s at %s only, streambench needs %s/%s; upgrade the Strimzi operator to 1.x (https://strimzi.io/install/latest)",
				gvk.Kind, Group, old.GroupVersionKind.Version, Group, Version)
		}
		return errors.New("Strimzi is not installed: the " + Group + "/" + Version + " " + gvk.Kind +
			" CRD was not found; install the Strimzi operator 1.x (https://strimzi.io/install/latest, or the strimzi-kafka-operator Helm chart) watching the run's namespace")
	}
	return nil
}
