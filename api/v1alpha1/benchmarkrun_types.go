package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// System is the messaging system under test.
// +kubebuilder:validation:Enum=kafka;pulsar
type System string

const (
	SystemKafka  System = "kafka"
	SystemPulsar System = "pulsar"
)

// BenchmarkRunSpec declares one benchmark: the brokers, their durability and
// the workload. It is immutable: to run again, create a new object.
// +kubebuilder:validation:XValidation:rule="self.system == 'pulsar' || !has(self.cluster.managed) || (!has(self.cluster.managed.bookies) && !has(self.cluster.managed.metadataStoreReplicas))",message="spec.cluster.managed.bookies and metadataStoreReplicas apply to system pulsar only; remove them for kafka"
// +kubebuilder:validation:XValidation:rule="self.system == 'pulsar' || !has(self.cluster.existing) || has(self.cluster.existing.bootstrapServers) != has(self.cluster.existing.strimziCluster)",message="spec.cluster.existing: system kafka needs exactly one of bootstrapServers or strimziCluster"
// +kubebuilder:validation:XValidation:rule="self.system == 'pulsar' || !has(self.cluster.existing) || (!has(self.cluster.existing.serviceURL) && !has(self.cluster.existing.adminURL))",message="spec.cluster.existing.serviceURL and adminURL apply to system pulsar only; use bootstrapServers or strimziCluster for kafka"
// +kubebuilder:validation:XValidation:rule="self.system == 'kafka' || !has(self.cluster.existing) || (has(self.cluster.existing.serviceURL) && has(self.cluster.existing.adminURL))",message="spec.cluster.existing: system pulsar needs both serviceURL (pulsar://...) and adminURL (http://...)"
// +kubebuilder:validation:XValidation:rule="self.system == 'kafka' || !has(self.cluster.existing) || (!has(self.cluster.existing.bootstrapServers) && !has(self.cluster.existing.strimziCluster))",message="spec.cluster.existing.bootstrapServers and strimziCluster apply to system kafka only; use serviceURL and adminURL for pulsar"
// +kubebuilder:validation:XValidation:rule="self.system != 'kafka' || !has(self.cluster.managed) || self.cluster.managed.brokers >= (has(self.durability) && has(self.durability.replication) ? self.durability.replication.replicas : 3)",message="spec.cluster.managed.brokers must be at least the replication factor (spec.durability.replication.replicas, 3 for a level); add brokers or lower replicas"
// +kubebuilder:validation:XValidation:rule="self.system != 'pulsar' || !has(self.cluster.managed) || (has(self.cluster.managed.bookies) ? self.cluster.managed.bookies : 3) >= (has(self.durability) && has(self.durability.replication) ? self.durability.replication.replicas : 3)",message="spec.cluster.managed.bookies must be at least the ensemble size (spec.durability.replication.replicas, 3 for a level); add bookies or lower replicas"
// +kubebuilder:validation:XValidation:rule="self.system == 'kafka' || !has(self.cluster.managed) || !has(self.cluster.managed.storage) || !has(self.cluster.managed.storage.additionalData)",message="spec.cluster.managed.storage.additionalData (Kafka JBOD log directories) applies to system kafka only; use storage.journal and storage.ledgers for pulsar"
// +kubebuilder:validation:XValidation:rule="!has(self.testbed) || !has(self.testbed.dropPageCache) || !self.testbed.dropPageCache || has(self.cluster.managed)",message="spec.testbed.dropPageCache needs managed brokers (spec.cluster.managed): the nodes of an existing cluster's brokers are not known; drop the page cache on them by hand and remove dropPageCache"
// +kubebuilder:validation:XValidation:rule="!has(self.thresholds) || !has(self.workload.subscriptionsPerTopic) || self.workload.subscriptionsPerTopic > 0 || !self.thresholds.exists(t, t.figure.startsWith('endToEndLatencyMs') || t.figure == 'consumeMBPerSec')",message="spec.thresholds bounds an end-to-end or consume figure, but spec.workload.subscriptionsPerTopic is 0: a produce-only run has none; remove the threshold or add subscriptions"
// +kubebuilder:validation:XValidation:rule="!has(self.driver) || !has(self.driver.kafka) || self.system == 'kafka'",message="spec.driver.kafka is set but spec.system is pulsar; move the settings to spec.driver.pulsar"
// +kubebuilder:validation:XValidation:rule="!has(self.driver) || !has(self.driver.pulsar) || self.system == 'pulsar'",message="spec.driver.pulsar is set but spec.system is kafka; move the settings to spec.driver.kafka"
// +kubebuilder:validation:XValidation:rule="!has(self.payload) || (has(self.workload.payloadFile) && self.workload.payloadFile.size() > 0)",message="spec.payload gives the bytes of spec.workload.payloadFile, which is not set; set payloadFile or remove spec.payload"
// +kubebuilder:validation:XValidation:rule="!has(self.cluster.existing) || !has(self.cluster.existing.authentication) || !has(self.cluster.existing.authentication.mechanism) || (self.system == 'kafka') == (self.cluster.existing.authentication.mechanism in ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'])",message="spec.cluster.existing.authentication.mechanism: kafka takes PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER; pulsar takes Token or OAuth2"
// +kubebuilder:validation:XValidation:rule="!has(self.cluster.existing) || !has(self.cluster.existing.authentication) || !has(self.cluster.existing.authentication.strimziKafkaUser) || self.system == 'kafka'",message="spec.cluster.existing.authentication.strimziKafkaUser applies to system kafka only; use mechanism Token or OAuth2 for pulsar"
// +kubebuilder:validation:XValidation:rule="!has(self.cluster.existing) || !has(self.cluster.existing.authentication) || !has(self.cluster.existing.authentication.strimziKafkaUser) || self.cluster.existing.authentication.strimziKafkaUser.type != 'tls' || (has(self.cluster.existing.tls) && !has(self.cluster.existing.tls.clientCertificate))",message="spec.cluster.existing.authentication.strimziKafkaUser of type tls is mutual TLS: set spec.cluster.existing.tls (its ca) and leave tls.clientCertificate out (the user's Secret has it)"
// +kubebuilder:validation:XValidation:rule="self.system != 'kafka' || !has(self.cluster.existing) || !has(self.cluster.existing.authentication) || !has(self.cluster.existing.authentication.oauth2) || has(self.cluster.existing.authentication.oauth2.tokenEndpoint)",message="spec.cluster.existing.authentication.oauth2.tokenEndpoint is required for kafka (sasl.oauthbearer.token.endpoint.url)"
// +kubebuilder:validation:XValidation:rule="self.system != 'pulsar' || !has(self.cluster.existing) || !has(self.cluster.existing.authentication) || !has(self.cluster.existing.authentication.oauth2) || has(self.cluster.existing.authentication.oauth2.issuerURL)",message="spec.cluster.existing.authentication.oauth2.issuerURL is required for pulsar (Pulsar's issuerUrl: the Pulsar clients find the token endpoint in its /.well-known/openid-configuration)"
// +kubebuilder:validation:XValidation:rule="self.system != 'pulsar' || !has(self.cluster.existing) || !has(self.cluster.existing.tls) || ((!has(self.cluster.existing.serviceURL) || self.cluster.existing.serviceURL.startsWith('pulsar+ssl://')) && (!has(self.cluster.existing.adminURL) || self.cluster.existing.adminURL.startsWith('https://')))",message="spec.cluster.existing.tls for pulsar needs serviceURL pulsar+ssl://host:6651 and adminURL https://host:8443"
// +kubebuilder:validation:XValidation:rule="!has(self.cluster.managed) || !has(self.cluster.managed.security) || !has(self.cluster.managed.security.authentication) || (self.system == 'kafka') == (self.cluster.managed.security.authentication in ['scram-sha-512', 'tls'])",message="spec.cluster.managed.security.authentication: kafka takes scram-sha-512 or tls (a Strimzi KafkaUser); pulsar takes token"
// +kubebuilder:validation:XValidation:rule="!has(self.faults) || size(self.faults) == 0 || has(self.cluster.managed) || (has(self.cluster.existing) && has(self.cluster.existing.faults) && self.cluster.existing.faults.allowDisruption)",message="spec.faults would stop, kill or delete pods of spec.cluster.existing, brokers this run did not deploy and others may use; to do it anyway set spec.cluster.existing.faults.allowDisruption: true (and its podSelector, unless strimziCluster names the cluster), or remove spec.faults"
type BenchmarkRunSpec struct {
	// System is the messaging system under test.
	System System `json:"system"`

	// Cluster is where the brokers come from: deployed for this run
	// (managed) or already running (existing).
	Cluster ClusterSpec `json:"cluster"`

	// Durability is the guarantee every acknowledged message gets; it is
	// translated into each system's settings so both sides of a comparison
	// give the same guarantee.
	// Defaults to level 2, the strongest level both systems provide.
	// +kubebuilder:default={level: 2}
	// +optional
	Durability *DurabilitySpec `json:"durability,omitempty"`

	// Workload is an OpenMessaging Benchmark workload.
	Workload WorkloadSpec `json:"workload"`

	// Workers are the load-generating pods.
	// +kubebuilder:default={}
	// +optional
	Workers WorkersSpec `json:"workers"`

	// Driver overrides client settings of the system under test.
	// +optional
	Driver *DriverSpec `json:"driver,omitempty"`

	// Payload gives the bytes of spec.workload.payloadFile in a cluster,
	// where the coordinator pod cannot see the files of the machine the run
	// was written on.
	// +optional
	Payload *PayloadSpec `json:"payload,omitempty"`

	// Teardown says when what the run deployed is removed.
	// +kubebuilder:default={}
	// +optional
	Teardown TeardownSpec `json:"teardown"`

	// Timeouts bound each wait; a passed deadline fails the run.
	// +kubebuilder:default={}
	// +optional
	Timeouts TimeoutsSpec `json:"timeouts"`

	// Testbed says what is measured and prepared on the brokers' nodes
	// before the load: the storage probe (on by default, never on a
	// broker's disk) and a dropped page cache.
	// +optional
	Testbed *TestbedSpec `json:"testbed,omitempty"`
	// Monitoring says where the broker figures of the measured phase are
	// read from (monitoring_types.go).
	// +optional
	Monitoring *MonitoringSpec `json:"monitoring,omitempty"`

	// Thresholds are bounds on the results, checked when the run
	// finishes: condition ThresholdsMet names each one failed with its
	// measured value (threshold_types.go).
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	Thresholds []Threshold `json:"thresholds,omitempty"`

	// Cost prices the results (status.results.cost): a price model, inline
	// or from a ConfigMap; without it, the default list prices.
	// +optional
	Cost *CostSpec `json:"cost,omitempty"`

	// Results says where the results are kept beyond the results
	// ConfigMap: spec.results.archive, an S3-compatible bucket.
	// +optional
	Results *ResultsSpec `json:"results,omitempty"`

	// Repeats runs the workload this many times (default 1) on the same
	// brokers and workers, each repeat with fresh topics: status.results is
	// then the median of each figure over the repeats, status.intervals
	// puts each median in its distribution-free interval, status.repeats
	// keeps each repeat's headline, and compare tests two repeated runs for
	// a difference beyond their own spread (docs/methodology.md, "Repeats
	// and differences"). 6 or more bound a median at 95 %. spec.timeouts.run
	// bounds each repeat.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=20
	// +optional
	Repeats int32 `json:"repeats,omitempty"`

	// Faults are done to the brokers during the measured phase, each at
	// its time: a process paused or killed, a pod deleted
	// (faults_types.go). status.faults says when each came and cleared and
	// what it did to the load; a repeated run gets the schedule in every
	// repeat. Checked against the rest of the spec when the run starts
	// (internal/faults): each must fall inside the measured phase and hit
	// a role and ordinal the brokers have. On spec.cluster.existing they
	// need spec.cluster.existing.faults.allowDisruption.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	Faults []Fault `json:"faults,omitempty"`
}

// RepeatCount is how many times the run's workload runs: spec.repeats, at
// least once.
func (s *BenchmarkRunSpec) RepeatCount() int { return max(int(s.Repeats), 1) }

// ClusterSpec is exactly one of managed or existing.
// +kubebuilder:validation:XValidation:rule="has(self.managed) != has(self.existing)",message="spec.cluster: set exactly one of managed (deploy brokers for this run) or existing (use running brokers)"
type ClusterSpec struct {
	// Managed brokers are deployed for the run: Kafka through Strimzi, Pulsar
	// through the Apache Pulsar Helm chart.
	// +optional
	Managed *ManagedCluster `json:"managed,omitempty"`

	// Existing brokers are used as they are; nothing is deployed.
	// +optional
	Existing *ExistingCluster `json:"existing,omitempty"`
}

// ManagedCluster is the topology of brokers deployed for one run. Keys that
// carry the durability are refused in brokerConfig and bookieConfig, so the
// level in status.durability stays true.
// +kubebuilder:validation:XValidation:rule="!has(self.brokerConfig) || ['min.insync.replicas', 'default.replication.factor', 'unclean.leader.election.enable', 'log.flush.interval.messages', 'log.flush.interval.ms', 'log.flush.scheduler.interval.ms', 'managedLedgerDefaultEnsembleSize', 'managedLedgerDefaultWriteQuorum', 'managedLedgerDefaultAckQuorum'].all(k, !(k in self.brokerConfig))",message="spec.cluster.managed.brokerConfig must not set durability keys (min.insync.replicas, default.replication.factor, unclean.leader.election.enable, log.flush.*, managedLedgerDefault*Quorum/EnsembleSize); set spec.durability instead"
// +kubebuilder:validation:XValidation:rule="!has(self.bookieConfig) || ['journalWriteData', 'journalSyncData', 'journalMaxGroupWaitMSec', 'journalPageCacheFlushIntervalMSec'].all(k, !(k in self.bookieConfig))",message="spec.cluster.managed.bookieConfig must not set the journal keys (journalWriteData, journalSyncData, journalMaxGroupWaitMSec, journalPageCacheFlushIntervalMSec); set spec.durability instead"
type ManagedCluster struct {
	// Brokers is the number of Kafka brokers or Pulsar brokers.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +optional
	Brokers int32 `json:"brokers,omitempty"`

	// Bookies is the number of BookKeeper bookies (pulsar only; default 3).
	// +kubebuilder:validation:Minimum=1
	// +optional
	Bookies int32 `json:"bookies,omitempty"`

	// MetadataStoreReplicas is the number of ZooKeeper nodes (pulsar only;
	// default 3).
	// +kubebuilder:validation:Minimum=1
	// +optional
	MetadataStoreReplicas int32 `json:"metadataStoreReplicas,omitempty"`

	// Version of Kafka (e.g. 4.3.1) or of the Pulsar image (e.g. 4.0.12).
	// Empty means the Strimzi or chart default.
	// +optional
	Version string `json:"version,omitempty"`

	// Resources per component.
	// +optional
	Resources ComponentResources `json:"resources,omitempty"`

	// Placement pins brokers (and bookies) to a node pool, usually the NVMe
	// pool: node selector, affinity and tolerations.
	// +optional
	Placement Placement `json:"placement,omitempty"`

	// AuxiliaryPlacement is where Pulsar's components off the data path
	// run: ZooKeeper, autorecovery and the chart's init Jobs (pulsar
	// only). Set, it is used as it is: its nodeSelector and affinity pin
	// them, and its tolerations are theirs (placement's are not added).
	// Unset (the default), they prefer nodes outside placement's
	// nodeSelector (a preferred node affinity, weight 100, against each of
	// its labels) and tolerate placement's taints: off the bookies' and
	// brokers' nodes, so they take no CPU or disk from the components
	// under test, where other nodes exist, and on them where none do (a
	// one-pool or one-node cluster). To be sure they stay off the pool,
	// name their nodes here, e.g. nodeSelector {node-pool: system}.
	// +optional
	AuxiliaryPlacement *Placement `json:"auxiliaryPlacement,omitempty"`

	// Storage of brokers (Kafka) and bookies (Pulsar). Defaulted to {} so
	// its own defaults (deleteClaim: true) are written into the stored run.
	// +kubebuilder:default={}
	// +optional
	Storage StorageSpec `json:"storage,omitempty"`

	// BrokerConfig is extra broker configuration, applied after (and so
	// over) the durability translation's broker settings.
	// +optional
	BrokerConfig map[string]string `json:"brokerConfig,omitempty"`

	// BookieConfig is extra bookie configuration (pulsar only).
	// +optional
	BookieConfig map[string]string `json:"bookieConfig,omitempty"`

	// Security secures the brokers' client listener (TLS, and users or
	// tokens the run makes), so the cost of security itself can be
	// measured: the same workload plain, with TLS and with TLS and
	// authentication (security_types.go).
	// +optional
	Security *ManagedSecurity `json:"security,omitempty"`
}

// ComponentResources are compute resources per broker component.
type ComponentResources struct {
	// +optional
	Broker corev1.ResourceRequirements `json:"broker,omitempty"`
	// +optional
	Bookie corev1.ResourceRequirements `json:"bookie,omitempty"`
	// +optional
	MetadataStore corev1.ResourceRequirements `json:"metadataStore,omitempty"`
}

// Placement is where pods are scheduled.
type Placement struct {
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// StorageSpec is the storage of managed brokers and bookies.
type StorageSpec struct {
	// Data is Kafka's log directory volume.
	// +optional
	Data VolumeSpec `json:"data,omitempty"`
	// AdditionalData are more Kafka log directory volumes (Strimzi JBOD,
	// volume ids 1, 2, ...), so a broker can use as many disks as a bookie
	// uses for journal and ledgers (kafka only). Size defaults to data's.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	AdditionalData []VolumeSpec `json:"additionalData,omitempty"`
	// Journal is the bookies' journal volume (pulsar only).
	// +optional
	Journal VolumeSpec `json:"journal,omitempty"`
	// Ledgers is the bookies' ledger volume (pulsar only).
	// +optional
	Ledgers VolumeSpec `json:"ledgers,omitempty"`
	// MetadataStore is ZooKeeper's data volume (pulsar only). ZooKeeper
	// runs off the brokers' node pool, so it does not take the journal's or
	// the ledgers' class; empty means the cluster's default class. The run
	// fails in Pending, before anything is deployed, when that leaves no
	// class (a cluster without a default, such as a new EKS cluster: the
	// claims would stay Pending) or the bookies' own static class (a
	// claim would take a bookie's disk): name a class here then. Size
	// defaults to the chart's 20Gi.
	// +optional
	MetadataStore VolumeSpec `json:"metadataStore,omitempty"`
	// DeleteClaim removes the volumes with the brokers at teardown.
	// +kubebuilder:default=true
	// +optional
	DeleteClaim *bool `json:"deleteClaim,omitempty"`
}

// VolumeSpec is one persistent volume claim template.
type VolumeSpec struct {
	// StorageClassName, e.g. the NVMe pool's local-storage class. Empty means
	// the cluster default.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
	// Size of the volume.
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`
}

// ExistingCluster names running brokers.
type ExistingCluster struct {
	// BootstrapServers of a Kafka cluster (host:port,...).
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:XValidation:rule="self.matches('^[^, ]+:[0-9]{1,5}(,[^, ]+:[0-9]{1,5})*$')",message="spec.cluster.existing.bootstrapServers must list host:port addresses separated by commas, e.g. my-kafka-bootstrap.kafka:9092; it must not be empty"
	// +optional
	BootstrapServers string `json:"bootstrapServers,omitempty"`
	// StrimziCluster names a Strimzi Kafka whose bootstrap is used.
	// +optional
	StrimziCluster *StrimziClusterRef `json:"strimziCluster,omitempty"`
	// ServiceURL of a Pulsar cluster (pulsar://host:6650).
	// +kubebuilder:validation:Pattern=`^pulsar(\+ssl)?://[^/:\s]+`
	// +optional
	ServiceURL string `json:"serviceURL,omitempty"`
	// AdminURL of a Pulsar cluster (http://host:8080).
	// +kubebuilder:validation:Pattern=`^https?://[^/:\s]+`
	// +optional
	AdminURL string `json:"adminURL,omitempty"`
	// TLS encrypts the clients' connections (security_types.go). Pulsar's
	// service and admin URLs must then be pulsar+ssl:// and https://.
	// +optional
	TLS *ClientTLS `json:"tls,omitempty"`
	// Authentication of the clients, with credentials from Secrets
	// (security_types.go).
	// +optional
	Authentication *ClientAuthentication `json:"authentication,omitempty"`
	// Faults is the consent to spec.faults on these brokers, and where
	// their pods are (faults_types.go).
	// +optional
	Faults *ExistingClusterFaults `json:"faults,omitempty"`
}

// StrimziClusterRef names a Strimzi Kafka resource.
type StrimziClusterRef struct {
	// Name of the Kafka resource.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Namespace of the Kafka resource; empty means the run's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// WorkersSpec describes the load-generating pods.
type WorkersSpec struct {
	// Count of worker pods. With consumers, half of them produce and half
	// consume (as OMB); a produce-only workload uses all of them to produce.
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=1
	// +optional
	Count int32 `json:"count,omitempty"`
	// Image overrides the streambench image the manager was started with.
	// +optional
	Image string `json:"image,omitempty"`
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
	// +optional
	Placement Placement `json:"placement,omitempty"`
}

// DriverSpec overrides client settings; the section must match spec.system.
type DriverSpec struct {
	// ConfigMapRef names an OMB driver file (driver-kafka/kafka-*.yaml,
	// driver-pulsar/pulsar*.yaml) kept in a ConfigMap of the run's
	// namespace. It is read once, when the run starts, and mapped onto these
	// settings; kafka and pulsar settings written here win over the file's.
	// The result is status.driver.
	// +optional
	ConfigMapRef *ConfigMapFileRef `json:"configMapRef,omitempty"`
	// +optional
	Kafka *KafkaDriver `json:"kafka,omitempty"`
	// +optional
	Pulsar *PulsarDriver `json:"pulsar,omitempty"`
}

// KafkaDriver overrides Kafka client and topic settings. Keys that carry the
// durability (acks, min.insync.replicas, flush.*, unclean.leader.election.enable) are refused: change
// spec.durability instead, so the reported level stays true.
// +kubebuilder:validation:XValidation:rule="!has(self.producer) || !('acks' in self.producer)",message="spec.driver.kafka.producer.acks is set by spec.durability; remove it and choose the durability level instead"
// +kubebuilder:validation:XValidation:rule="!has(self.producer) || !('enable.idempotence' in self.producer)",message="spec.driver.kafka.producer.enable.idempotence is set by spec.durability; remove it and choose the durability level instead"
// +kubebuilder:validation:XValidation:rule="!has(self.topic) || ['min.insync.replicas', 'flush.messages', 'flush.ms', 'unclean.leader.election.enable'].all(k, !(k in self.topic))",message="spec.driver.kafka.topic: min.insync.replicas, flush.messages, flush.ms and unclean.leader.election.enable are set by spec.durability; remove them and choose the durability level instead"
type KafkaDriver struct {
	// Producer configuration (e.g. linger.ms, batch.size).
	// +optional
	Producer map[string]string `json:"producer,omitempty"`
	// Consumer configuration (e.g. max.partition.fetch.bytes).
	// +optional
	Consumer map[string]string `json:"consumer,omitempty"`
	// Topic configuration for the benchmark topics.
	// +optional
	Topic map[string]string `json:"topic,omitempty"`
}

// PulsarDriver overrides Pulsar client settings.
type PulsarDriver struct {
	// Client configuration (e.g. ioThreads, connectionsPerBroker).
	// +optional
	Client map[string]string `json:"client,omitempty"`
	// Producer configuration (e.g. batchingMaxPublishDelayMs).
	// +optional
	Producer map[string]string `json:"producer,omitempty"`
	// Consumer configuration (e.g. receiverQueueSize, subscriptionType).
	// +optional
	Consumer map[string]string `json:"consumer,omitempty"`
}

// ConfigMapFileRef names one file kept in a ConfigMap of the run's
// namespace: a key of its data or, for bytes that are not UTF-8, binaryData
// (kubectl create configmap --from-file puts each file where it belongs). A
// ConfigMap holds at most 1 MiB.
type ConfigMapFileRef struct {
	// Name of the ConfigMap.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Key of the file in the ConfigMap. Empty means the ConfigMap's only key
	// (spec.driver.configMapRef) or the payloadFile's base name
	// (spec.payload.configMapRef), which is the key kubectl create configmap
	// --from-file gives it.
	// +optional
	Key string `json:"key,omitempty"`
}

// PayloadSpec says where the coordinator finds spec.workload.payloadFile.
type PayloadSpec struct {
	// ConfigMapRef names the ConfigMap with the payload file; it is mounted
	// read-only into the coordinator pod, which sends the bytes to the
	// workers. Create it with: kubectl create configmap NAME
	// --from-file=payload/ (every OMB payload file, keyed by its base name).
	ConfigMapRef ConfigMapFileRef `json:"configMapRef"`
}

// TeardownPolicy says when deployed brokers and workers are removed.
// +kubebuilder:validation:Enum=Always;OnSuccess;Never
type TeardownPolicy string

const (
	TeardownAlways    TeardownPolicy = "Always"
	TeardownOnSuccess TeardownPolicy = "OnSuccess"
	TeardownNever     TeardownPolicy = "Never"
)

// TeardownSpec is the clean-up policy.
type TeardownSpec struct {
	// Policy Always removes brokers and workers when the run ends; OnSuccess
	// keeps them after a failure for inspection; Never keeps them.
	// +kubebuilder:default=Always
	// +optional
	Policy TeardownPolicy `json:"policy,omitempty"`
	// TTLSecondsAfterFinished deletes the BenchmarkRun itself (and with it
	// its results ConfigMap) this long after it ended.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// TimeoutsSpec bounds the waits of a run.
type TimeoutsSpec struct {
	// Provisioning bounds the wait for brokers to be ready.
	// +kubebuilder:default="20m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$')",message="must be a duration such as 90s, 20m or 1h30m (units ns, us, ms, s, m, h; no days)"
	// +optional
	Provisioning *metav1.Duration `json:"provisioning,omitempty"`
	// Run bounds the workers; empty means the workload's estimate: warm-up,
	// the rate search, the backlog build at producerRate and its drain, the
	// test and 10 minutes of setup, plus 10 %. A value below the estimate
	// is accepted and said in the RunTimeoutSufficient condition.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$')",message="must be a duration such as 90s, 20m or 1h30m (units ns, us, ms, s, m, h; no days)"
	// +optional
	Run *metav1.Duration `json:"run,omitempty"`
}

// BenchmarkRunStatus is what the controller observed and measured.
type BenchmarkRunStatus struct {
	// Phase moves forward only: Pending, Provisioning, Running, Collecting,
	// then Succeeded or Failed.
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// PhaseTimes is when the run entered each phase it went through, so
	// the deadlines of Running and Collecting count from the real entry,
	// also after an operator restart.
	// +optional
	PhaseTimes *PhaseTimes `json:"phaseTimes,omitempty"`
	// Durability is the guarantee in effect, per component.
	// +optional
	Durability *EffectiveDurability `json:"durability,omitempty"`
	// Brokers are the addresses the workers use.
	// +optional
	Brokers *BrokerEndpoints `json:"brokers,omitempty"`
	// Driver is the client settings the run uses: the driver file of
	// spec.driver.configMapRef mapped onto spec.driver's fields, with the
	// settings written in spec.driver over them. Kept here because the
	// ConfigMap may change or go after the run started.
	// +optional
	Driver *DriverSpec `json:"driver,omitempty"`
	// PriceModel is the price model of spec.cost, read when the run
	// started (kept here for the reason Driver is); absent: the default.
	// +optional
	PriceModel *PriceModel `json:"priceModel,omitempty"`
	// Results is the summary of the measurements.
	// +optional
	Results *ResultsSummary `json:"results,omitempty"`
	// ResultsRef names the ConfigMap with the full results.
	// +optional
	ResultsRef string `json:"resultsRef,omitempty"`
	// Archive is where the results were archived (spec.results.archive
	// or the operator's default); condition Archived says how it went.
	// +optional
	Archive *ArchiveStatus `json:"archive,omitempty"`
	// Repeats are the headlines of a repeated run's repeats
	// (spec.repeats), in the order run; results holds their medians.
	// +listType=atomic
	// +optional
	Repeats []RepeatResults `json:"repeats,omitempty"`
	// Intervals put each figure of a repeated run's results (the median
	// over its repeats) in its distribution-free interval.
	// +listType=atomic
	// +optional
	Intervals []FigureInterval `json:"intervals,omitempty"`
	// Message says what happened last, and why a run failed.
	// +optional
	Message string `json:"message,omitempty"`
	// Testbed is what the run stood on, probed before the load.
	// +optional
	Testbed *Testbed `json:"testbed,omitempty"`
	// Monitoring says whether the run is scraped by a Prometheus
	// Operator (PodMonitors created) and which Prometheus the coordinator
	// asks for the brokers' figures.
	// +optional
	Monitoring *MonitoringStatus `json:"monitoring,omitempty"`
	// Faults are spec.faults as they happened: when each came and
	// cleared, what it hit, and what it did to the load (faults_types.go).
	// +listType=atomic
	// +optional
	Faults []FaultStatus `json:"faults,omitempty"`
	// Display holds the headline figures rounded for reading, for the
	// printer columns of kubectl get: a printer column cannot format a
	// number, and 4.0957464299870745 MB/s reads like noise. The full
	// values stay in results, testbed and the results ConfigMap.
	// +optional
	Display *StatusDisplay `json:"display,omitempty"`
}

// RepeatResults is one repeat of a repeated run.
type RepeatResults struct {
	// Index counts from 1, in the order run.
	Index int32 `json:"index"`
	// Start and End bound the repeat, from its topics' creation to their
	// deletion.
	Start metav1.Time `json:"start"`
	End   metav1.Time `json:"end"`
	// Results is the repeat's headline; its full results are the keys
	// repeat-<index>.* of the results ConfigMap.
	Results ResultsSummary `json:"results"`
}

// FigureInterval is one figure of a repeated run: the median over its
// repeats, and the interval that holds the median with probability
// Confidence whatever the figures' distribution (order statistics of the
// repeats; fewer than 6 repeats cannot reach 95 %, and then the widest,
// from the smallest to the largest, is given with its own coverage).
type FigureInterval struct {
	// Figure is a path in status.results, as spec.thresholds names it
	// (publishLatencyMs.p99, publishMBPerSec, ...).
	Figure string `json:"figure"`
	// N is how many repeats have the figure.
	N          int32   `json:"n"`
	Median     float64 `json:"median"`
	Low        float64 `json:"low"`
	High       float64 `json:"high"`
	Confidence float64 `json:"confidence"`
}

// PhaseTimes records when a run entered each phase.
type PhaseTimes struct {
	// +optional
	Pending *metav1.Time `json:"pending,omitempty"`
	// Queued is when the run began to wait for another run on the same
	// nodes or for their disks (absent when it never waited).
	// +optional
	Queued *metav1.Time `json:"queued,omitempty"`
	// +optional
	Provisioning *metav1.Time `json:"provisioning,omitempty"`
	// +optional
	Running *metav1.Time `json:"running,omitempty"`
	// +optional
	Collecting *metav1.Time `json:"collecting,omitempty"`
	// Finished is when the run entered Succeeded or Failed.
	// +optional
	Finished *metav1.Time `json:"finished,omitempty"`
}

// StatusDisplay is the run's headline figures as text with two decimals,
// derived from status.results and status.testbed (RefreshDisplay); empty
// until the figure exists.
type StatusDisplay struct {
	// +optional
	PublishMBPerSec string `json:"publishMBPerSec,omitempty"`
	// +optional
	PublishP99Ms string `json:"publishP99Ms,omitempty"`
	// +optional
	CorrectedP99Ms string `json:"correctedP99Ms,omitempty"`
	// +optional
	EndToEndP99Ms string `json:"endToEndP99Ms,omitempty"`
	// +optional
	FsyncP99Ms string `json:"fsyncP99Ms,omitempty"`
	// Thresholds is "met" or "failed" once spec.thresholds were checked
	// (condition ThresholdsMet).
	// +optional
	Thresholds string `json:"thresholds,omitempty"`
	// Faults is status.faults in short: how many were injected and, once
	// read, the lowest interval's rate against the target and the longest
	// time to recover ("2/2 injected; lowest 0 %; back after 12 s").
	// +optional
	Faults string `json:"faults,omitempty"`
}

// BrokerEndpoints are the addresses of the system under test.
type BrokerEndpoints struct {
	// +optional
	BootstrapServers string `json:"bootstrapServers,omitempty"`
	// +optional
	ServiceURL string `json:"serviceURL,omitempty"`
	// +optional
	AdminURL string `json:"adminURL,omitempty"`
}

// LatencySummary is a latency distribution in milliseconds.
type LatencySummary struct {
	Avg   float64 `json:"avg"`
	P50   float64 `json:"p50"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	P9999 float64 `json:"p9999"`
	Max   float64 `json:"max"`
}

// CatchUpSummary is the drain of a backlog.
type CatchUpSummary struct {
	// DrainMBPerSec is the read throughput while draining, in MB/s (10^6).
	DrainMBPerSec float64 `json:"drainMBPerSec"`
	// DrainSeconds is how long the drain took.
	DrainSeconds float64 `json:"drainSeconds"`
	// PublishLatencyMs during the drain, reported on its own (mixed workload).
	// +optional
	PublishLatencyMs *LatencySummary `json:"publishLatencyMs,omitempty"`
}

// ResultsSummary is the headline of a run; the same numbers as the
// coordinator's summary JSON.
type ResultsSummary struct {
	// PublishRateMsgPerSec is the average publish rate of the measured phase.
	PublishRateMsgPerSec float64 `json:"publishRateMsgPerSec"`
	// PublishMBPerSec is the publish throughput in MB/s (10^6 bytes).
	PublishMBPerSec float64 `json:"publishMBPerSec"`
	// ConsumeMBPerSec is the consume throughput in MB/s (10^6 bytes).
	ConsumeMBPerSec float64 `json:"consumeMBPerSec"`
	// PublishLatencyMs is ack - send.
	PublishLatencyMs LatencySummary `json:"publishLatencyMs"`
	// CorrectedLatencyMs is ack - intended send time: the publish latency
	// corrected for coordinated omission, which also counts the time a
	// message waited to be sent because the load generator or the client
	// fell behind its schedule. Read it beside PublishLatencyMs: when they
	// differ, the schedule slipped and PublishLatencyMs understates.
	// +optional
	CorrectedLatencyMs *LatencySummary `json:"correctedLatencyMs,omitempty"`
	// EndToEndLatencyMs is receive - send, from the timestamp in the payload.
	// +optional
	EndToEndLatencyMs *LatencySummary `json:"endToEndLatencyMs,omitempty"`
	// CatchUp is the backlog drain, for backlog and mixed workloads.
	// +optional
	CatchUp *CatchUpSummary `json:"catchUp,omitempty"`
	// Partial is true when the run did not finish: the figures are what
	// the coordinator had recorded when it stopped (its last periodic
	// write), not a whole measured phase.
	// +optional
	Partial  bool  `json:"partial,omitempty"`
	Sent     int64 `json:"sent"`
	Acked    int64 `json:"acked"`
	Received int64 `json:"received"`
	// Lost is acknowledged messages a subscription never received although
	// its final drain ended: it had caught up with everything else, or
	// received nothing new for a minute.
	Lost int64 `json:"lost"`
	// NotConsumed is acknowledged messages a subscription had not read
	// when the final drain's deadline ran out while it was still
	// receiving (the backlog at the end; slow, not lost), or, for partial
	// results, what was unread when the run stopped.
	// +optional
	NotConsumed int64 `json:"notConsumed,omitempty"`
	// Duplicates is deliveries of an already received message, on one
	// worker or across workers.
	// +optional
	Duplicates int64 `json:"duplicates,omitempty"`
	// BrokerResources are the brokers' CPU, disk, network and GC over the
	// measured phase, all brokers together (summary.json has them per
	// broker); absent when nothing could be read.
	// +optional
	BrokerResources *BrokerResources `json:"brokerResources,omitempty"`
	// Cost is what the measured throughput costs under the run's price
	// model (spec.cost, or the default list prices it names); summary.json's
	// cost has every figure with its formula and its inputs' source.
	// +optional
	Cost *CostSummary `json:"cost,omitempty"`
}

// CostSummary is a run's cost in brief. A nil figure could not be
// computed: Missing says which input was not measured.
type CostSummary struct {
	// Model names the price model, Currency its currency.
	Model    string `json:"model"`
	Currency string `json:"currency"`
	// PerHour is the cost of an hour at the measured rate: compute
	// (reserved where known, else used), storage and cross-zone traffic;
	// PerTBIngested is that over the TB (10^12 bytes) produced in the hour.
	// +optional
	PerHour *float64 `json:"perHour,omitempty"`
	// +optional
	PerTBIngested *float64 `json:"perTBIngested,omitempty"`
	// MBPerSecPerCore is the produced MB/s per broker core used.
	// +optional
	MBPerSecPerCore *float64 `json:"mbPerSecPerCore,omitempty"`
	// ProjectedPerHour is the cost per hour projected to ProjectedMBPerSec
	// by scaling this run's efficiency (an assumption summary.json states);
	// absent when the projection was refused or not asked for.
	// +optional
	ProjectedPerHour *float64 `json:"projectedPerHour,omitempty"`
	// +optional
	ProjectedMBPerSec float64 `json:"projectedMBPerSec,omitempty"`
	// Missing says why a figure is absent.
	// +optional
	Missing string `json:"missing,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=br;bench,categories=streambench
// +kubebuilder:printcolumn:name="System",type=string,JSONPath=`.spec.system`
// +kubebuilder:printcolumn:name="Durability",type=integer,JSONPath=`.status.durability.achievedLevel`,description="Durability level achieved (1 strongest, 4 weakest)"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Pub MB/s",type=string,JSONPath=`.status.display.publishMBPerSec`,description="Publish throughput, rounded; the full value is status.results.publishMBPerSec"
// +kubebuilder:printcolumn:name="Pub p99 (ms)",type=string,JSONPath=`.status.display.publishP99Ms`,description="Publish latency p99 (ack - send), rounded; the full value is status.results.publishLatencyMs.p99"
// +kubebuilder:printcolumn:name="Corrected p99 (ms)",type=string,JSONPath=`.status.display.correctedP99Ms`,description="Publish latency p99 from the intended send time (ack - intended send, corrected for coordinated omission), rounded; the full value is status.results.correctedLatencyMs.p99"
// +kubebuilder:printcolumn:name="E2E p99 (ms)",type=string,JSONPath=`.status.display.endToEndP99Ms`,description="End-to-end latency p99, rounded; the full value is status.results.endToEndLatencyMs.p99"
// +kubebuilder:printcolumn:name="Fsync p99 (ms)",type=string,priority=1,JSONPath=`.status.display.fsyncP99Ms`,description="write+fdatasync p99 of the slowest probed broker volume, rounded; the full value is status.testbed.slowestFsyncP99Ms"
// +kubebuilder:printcolumn:name="Repeats",type=integer,priority=1,JSONPath=`.spec.repeats`,description="spec.repeats: results are the medians over this many repeats; the p99 columns then read median (low-high), its interval"
// +kubebuilder:printcolumn:name="Thresholds",type=string,priority=1,JSONPath=`.status.display.thresholds`,description="met or failed: spec.thresholds checked on the final results (condition ThresholdsMet names each failed one with its value)"
// +kubebuilder:printcolumn:name="Faults",type=string,priority=1,JSONPath=`.status.display.faults`,description="spec.faults: how many were injected, the lowest interval's publish rate against the target and the longest time to recover; status.faults has each one"
// +kubebuilder:printcolumn:name="Message",type=string,priority=1,JSONPath=`.status.message`,description="What the run does or waits for now, e.g. the run a Queued run waits for (condition Queued)"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 40",message="metadata.name must be at most 40 characters: the run's Jobs, pods and brokers are named after it; use a shorter name"

// BenchmarkRun is one fair, reproducible Kafka or Pulsar benchmark.
type BenchmarkRun struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable after creation; to run again, create a new BenchmarkRun (metadata.generateName)"
	Spec   BenchmarkRunSpec   `json:"spec"`
	Status BenchmarkRunStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// BenchmarkRunList is a list of BenchmarkRuns.
type BenchmarkRunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BenchmarkRun `json:"items"`
}

func init() {
	SchemeBuilder.Register(&BenchmarkRun{}, &BenchmarkRunList{})
}

// DurabilityOrDefault is the spec's durability, or for a spec that declares none, level 2,
// the strongest level that both Kafka and Pulsar provide. The CRD applies the
// same default; Go callers that bypass the API server (local mode) use this.
func (s *BenchmarkRunSpec) DurabilityOrDefault() DurabilitySpec {
	if s.Durability != nil {
		return *s.Durability
	}
	l := Level2
	return DurabilitySpec{Level: &l}
}
