package strimzi

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// DefaultBrokers is the spec's default for spec.cluster.managed.brokers.
const DefaultBrokers = v1alpha1.DefaultBrokers

// DefaultKafkaVersion is the Kafka that Strimzi 1.2.0 (StrimziVersion)
// deploys when a Kafka names no version: the newest of the 4.2.0, 4.2.1,
// 4.3.0 and 4.3.1 it supports (STRIMZI_KAFKA_IMAGES of its cluster
// operator's Deployment; TestDefaultKafkaVersionIsStrimzis reads it
// there). The controller reads the installed Strimzi's versions instead
// (ChooseKafkaVersion); it assumes this one only when it finds no Strimzi
// cluster operator, so that the durability report can still say whether
// the level was verified.
const DefaultKafkaVersion = "4.3.1"

// Kafka's internal topics. Their defaults (replication factor 3, min ISR 2
// for the transaction log) cannot be met by a 1- or 2-broker cluster:
// consumer groups would never get a coordinator and every benchmark
// consumer would hang. The builder sizes them to the cluster; durability
// and brokerConfig are applied over them.
const (
	configOffsetsReplicationFactor     = "offsets.topic.replication.factor"
	configTransactionReplicationFactor = "transaction.state.log.replication.factor"
	configTransactionMinISR            = "transaction.state.log.min.isr"
)

// StrimziVersion is the Strimzi release whose rules the builders follow
// (its install files: testdata/upstream/strimzi-1.2.0; its Java model,
// io.strimzi:api, is on Maven Central).
const StrimziVersion = "1.2.0"

// forbiddenConfigPrefixes are the spec.kafka.config keys Strimzi owns
// (KafkaClusterSpec.FORBIDDEN_PREFIXES of StrimziVersion): it compares the
// lower-cased key with each prefix and drops matches with only a warning
// in the Kafka's status. The builder refuses them instead, so a run never
// reports settings its brokers do not have. TestForbiddenListsAreStrimzis
// reads both lists out of Strimzi's own class, so they cannot drift.
var forbiddenConfigPrefixes = []string{
	"listeners", "advertised.", "broker.", "listener.", "host.name", "port",
	"inter.broker.listener.name", "sasl.", "ssl.", "security.", "password.", "log.dir",
	"zookeeper.connect", "zookeeper.set.acl", "zookeeper.ssl", "zookeeper.clientCnxnSocket", "authorizer.", "super.user",
	"cruise.control.metrics.topic", "cruise.control.metrics.reporter.bootstrap.servers",
	"node.id", "process.roles", "controller.", "metadata.log.dir", "zookeeper.metadata.migration.enable",
	"client.quota.callback.static.kafka.admin.", "client.quota.callback.static.produce", "client.quota.callback.static.fetch",
	"client.quota.callback.static.storage.per.volume.limit.min.available.", "client.quota.callback.static.excluded.principal.name.list",
	"prometheus.metrics.reporter.", "cordoned.log.dirs",
}

// forbiddenConfigExceptions are keys under a forbidden prefix that Strimzi
// passes through (KafkaClusterSpec.FORBIDDEN_PREFIX_EXCEPTIONS), matched
// exactly.
var forbiddenConfigExceptions = []string{
	"zookeeper.connection.timeout.ms", "sasl.server.max.receive.size",
	"ssl.cipher.suites", "ssl.protocol", "ssl.enabled.protocols", "ssl.secure.random.implementation",
	"cruise.control.metrics.topic.num.partitions", "cruise.control.metrics.topic.replication.factor", "cruise.control.metrics.topic.retention.ms",
	"cruise.control.metrics.topic.auto.create.retries", "cruise.control.metrics.topic.auto.create.timeout.ms",
	"cruise.control.metrics.topic.min.insync.replicas",
	"broker.session.timeout.ms", "broker.heartbeat.interval.ms", "controller.socket.timeout.ms",
	"controller.quorum.election.backoff.max.ms", "controller.quorum.election.timeout.ms", "controller.quorum.fetch.timeout.ms",
}

// forbiddenPrefix returns the Strimzi-owned prefix key falls under, or "".
func forbiddenPrefix(key string) string {
	if slices.Contains(forbiddenConfigExceptions, key) {
		return ""
	}
	lower := strings.ToLower(key)
	for _, p := range forbiddenConfigPrefixes {
		if strings.HasPrefix(lower, p) {
			return p
		}
	}
	return ""
}

// Private mirrors of the parts of Strimzi's Kafka schema set here.
type kafkaSpec struct {
	Kafka kafkaClusterSpec `json:"kafka"`
	// EntityOperator runs the User Operator only, and only for a run whose
	// clients authenticate (NeedsUser): it turns the run's KafkaUser into
	// SCRAM credentials on the brokers or a client certificate, and a
	// Secret. The Topic Operator stays off: the workers create and delete
	// the benchmark topics through the Kafka admin API, as OMB's driver
	// does, and it would be a second writer of topic configs.
	EntityOperator *entityOperatorSpec `json:"entityOperator,omitempty"`
}

type entityOperatorSpec struct {
	// UserOperator is empty: it watches the Kafka's namespace, which is
	// the run's, where the KafkaUser is.
	UserOperator *struct{} `json:"userOperator,omitempty"`
}

type kafkaClusterSpec struct {
	Version       string            `json:"version,omitempty"`
	Listeners     []kafkaListener   `json:"listeners"`
	Config        map[string]string `json:"config,omitempty"`
	MetricsConfig *metricsConfig    `json:"metricsConfig,omitempty"`
}

type kafkaListener struct {
	Name           string                  `json:"name"`
	Port           int32                   `json:"port"`
	Type           string                  `json:"type"`
	TLS            bool                    `json:"tls"`
	Authentication *listenerAuthentication `json:"authentication,omitempty"`
}

type listenerAuthentication struct {
	// Type is scram-sha-512 or tls (a client certificate signed by the
	// clients CA, which the User Operator issues).
	Type string `json:"type"`
}

type metricsConfig struct {
	Type      string            `json:"type"`
	ValueFrom metricsConfigFrom `json:"valueFrom"`
}

type metricsConfigFrom struct {
	ConfigMapKeyRef configMapKeyRef `json:"configMapKeyRef"`
}

type configMapKeyRef struct {
	Name string `json:"name"`
	Key  string `json:"key"`
}

// Kafka builds the run's Kafka. eff is the run's translated durability
// (durability.Translate for system kafka); its broker settings are the
// base of spec.kafka.config and spec.cluster.managed.brokerConfig is
// applied over them, as the API documents. Its version is
// KafkaVersionOf(run): the one the durability is stated for whenever the
// controller could read it from the installed Strimzi. It returns an
// error naming the field when the run is not a managed Kafka run, when it
// has fewer brokers than the replication factor, or when brokerConfig
// sets a key Strimzi owns.
func Kafka(run *v1alpha1.BenchmarkRun, eff v1alpha1.EffectiveDurability) (*unstructured.Unstructured, error) {
	m, err := managed(run)
	if err != nil {
		return nil, err
	}
	if eff.Kafka == nil {
		return nil, errors.New("status.durability has no Kafka settings; translate spec.durability for system kafka (durability.Translate) before building the Kafka")
	}
	brokers := brokerCount(m)
	if rf := eff.Kafka.ReplicationFactor; rf > brokers {
		return nil, fmt.Errorf("spec.cluster.managed.brokers (%d) must be at least the replication factor (%d, spec.durability.replication.replicas); add brokers or lower replicas", brokers, rf)
	}
	var bad []error
	for _, k := range slices.Sorted(maps.Keys(m.BrokerConfig)) {
		if p := forbiddenPrefix(k); p != "" {
			bad = append(bad, fmt.Errorf("spec.cluster.managed.brokerConfig[%q] is owned by Strimzi (keys starting with %q set listeners, security, node identity or the KRaft quorum, and Strimzi would ignore it); remove it", k, p))
		}
	}
	if len(bad) > 0 {
		return nil, errors.Join(bad...)
	}

	internalRF := min(brokers, 3)
	config := map[string]string{
		configOffsetsReplicationFactor:     itoa(internalRF),
		configTransactionReplicationFactor: itoa(internalRF),
		configTransactionMinISR:            itoa(min(internalRF, 2)),
	}
	for k, v := range eff.Kafka.Broker {
		config[k] = v
	}
	for k, v := range m.BrokerConfig {
		config[k] = v
	}

	listener, err := clientListener(m.Security)
	if err != nil {
		return nil, err
	}
	spec := kafkaSpec{Kafka: kafkaClusterSpec{
		Version:   KafkaVersionOf(run),
		Listeners: []kafkaListener{listener},
		Config:    config,
		MetricsConfig: &metricsConfig{
			Type: "jmxPrometheusExporter",
			ValueFrom: metricsConfigFrom{ConfigMapKeyRef: configMapKeyRef{
				Name: MetricsConfigMapName(run),
				Key:  MetricsConfigKey,
			}},
		},
	}}
	if NeedsUser(run) {
		spec.EntityOperator = &entityOperatorSpec{UserOperator: &struct{}{}}
	}
	return newObject(KafkaGVK, ClusterName(run), run.Namespace, labels(run), &spec)
}

// clientListener is the run's one listener, as spec.cluster.managed.security
// asks: plaintext on 9092 without it, TLS on 9093 with tls, and SCRAM or
// client certificates on either as authentication asks (a KafkaUser of the
// run). No authorization: the run's user may do what the workers need
// without ACLs, as any client of the plaintext listener may.
func clientListener(s *v1alpha1.ManagedSecurity) (kafkaListener, error) {
	l := kafkaListener{Name: ListenerName, Port: ListenerPort, Type: "internal"}
	if s == nil {
		return l, nil
	}
	if s.TLS {
		l.Name, l.Port, l.TLS = TLSListenerName, TLSListenerPort, true
	}
	switch s.Authentication {
	case "":
	case v1alpha1.ManagedAuthScramSHA512:
		l.Authentication = &listenerAuthentication{Type: "scram-sha-512"}
	case v1alpha1.ManagedAuthTLS:
		if !s.TLS {
			return kafkaListener{}, errors.New("spec.cluster.managed.security.authentication tls is mutual TLS: set spec.cluster.managed.security.tls: true")
		}
		l.Authentication = &listenerAuthentication{Type: "tls"}
	default:
		return kafkaListener{}, fmt.Errorf("spec.cluster.managed.security.authentication %q is not for Kafka: use scram-sha-512 (SCRAM over the listener) or tls (client certificates, with tls: true)", s.Authentication)
	}
	return l, nil
}

// managed returns the run's managed cluster, or an error when the run has
// none or is not a Kafka run.
func managed(run *v1alpha1.BenchmarkRun) (*v1alpha1.ManagedCluster, error) {
	if run.Spec.System != v1alpha1.SystemKafka {
		return nil, fmt.Errorf("spec.system is %q: Strimzi objects are built for system kafka only", run.Spec.System)
	}
	m := run.Spec.Cluster.Managed
	if m == nil {
		return nil, errors.New("spec.cluster.managed is not set: Strimzi objects are built for managed clusters only; an existing cluster needs no provisioning")
	}
	if m.Brokers < 0 {
		return nil, fmt.Errorf("spec.cluster.managed.brokers (%d) must be at least 1; set a positive count or remove it for the default %d", m.Brokers, DefaultBrokers)
	}
	return m, nil
}

func brokerCount(m *v1alpha1.ManagedCluster) int32 { return m.BrokersOrDefault() }

// newObject converts spec to an unstructured object of kind gvk.
func newObject(gvk schema.GroupVersionKind, name, namespace string, lbls map[string]string, spec any) (*unstructured.Unstructured, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(spec)
	if err != nil {
		return nil, fmt.Errorf("converting the %s spec: %w", gvk.Kind, err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": content}}
	u.SetGroupVersionKind(gvk)
	u.SetName(name)
	u.SetNamespace(namespace)
	u.SetLabels(lbls)
	return u, nil
}

func itoa(n int32) string { return fmt.Sprint(n) }
