package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FailurePolicy says what a suite does after a cell failed.
// +kubebuilder:validation:Enum=Continue;Stop
type FailurePolicy string

const (
	// FailureContinue records the failed cell and runs the next one: one
	// broken cell should not cost the rest of a matrix that took hours.
	FailureContinue FailurePolicy = "Continue"
	// FailureStop ends the suite at the first failed cell; the cells not
	// yet run are recorded as Skipped.
	FailureStop FailurePolicy = "Stop"
)

// BenchmarkSuiteSpec is the study's matrix: systems × durability settings ×
// workloads, measured one cell at a time on one deployed cluster per system
// and broker setting. It is immutable: to run again, create a new object.
type BenchmarkSuiteSpec struct {
	// Systems under test, each with its cluster and the durability settings
	// to measure on it; at most one entry per system.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=2
	// +listType=map
	// +listMapKey=system
	Systems []SuiteSystem `json:"systems"`

	// Workloads run on every system at every durability setting.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=name
	Workloads []SuiteWorkload `json:"workloads"`

	// Workers are the load-generating pods of every cell.
	// +kubebuilder:default={}
	// +optional
	Workers WorkersSpec `json:"workers"`

	// Teardown says when the clusters the suite deployed are removed, and
	// when the suite itself is deleted (ttlSecondsAfterFinished). With
	// Always a cluster goes as soon as its last cell finished, so that only
	// one deployed cluster stands on the nodes at a time; with OnSuccess it
	// is kept when one of its cells failed.
	// +kubebuilder:default={}
	// +optional
	Teardown TeardownSpec `json:"teardown"`

	// FailurePolicy Continue (default) records a failed cell and runs the
	// next; Stop ends the suite at the first failed cell.
	// +kubebuilder:default=Continue
	// +optional
	FailurePolicy FailurePolicy `json:"failurePolicy,omitempty"`

	// Timeouts bound each deployed cluster's provisioning and each cell's
	// run, as spec.timeouts of a BenchmarkRun.
	// +kubebuilder:default={}
	// +optional
	Timeouts TimeoutsSpec `json:"timeouts"`

	// Cost prices every cell's results as a run's spec.cost does (the
	// suite's tables then put each cell's cost side by side); without it,
	// the default list prices.
	// +optional
	Cost *CostSpec `json:"cost,omitempty"`

	// Results archives every cell's results as a run's spec.results does.
	// +optional
	Results *ResultsSpec `json:"results,omitempty"`

	// Repeats runs every cell this many times (default 1), each repeat a
	// child run of its own with fresh topics on the same deployed cluster,
	// interleaved with the other cells of that cluster (A B, B A, A B …)
	// so that a drift of the machine weighs on all of them alike. The
	// tables give each cell's median over its repeats in its interval and,
	// between cells, a verdict: a difference, or none beyond the repeats'
	// own spread (docs/methodology.md, "Repeats and differences"). Cells
	// of different clusters run one cluster after the other, not
	// interleaved: one deployed cluster stands at a time.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=20
	// +optional
	Repeats int32 `json:"repeats,omitempty"`

	// FaultSchedules are fault schedules to measure every cell under, a
	// dimension of the matrix like the workloads: each cell runs once per
	// schedule, with the schedule's faults as its spec.faults, and the
	// tables set a cell's schedules side by side. A schedule with no
	// faults is the healthy baseline, e.g. [{name: healthy}, {name:
	// broker-kill, faults: [{action: Kill, target: broker-1, at: 1m}]}].
	// Without it every cell runs without faults and the names carry no
	// schedule. On spec.systems[].cluster.existing, faults need that
	// cluster's faults.allowDisruption; on a cluster the suite deployed,
	// the suite's consent is this field.
	// +kubebuilder:validation:MaxItems=4
	// +listType=map
	// +listMapKey=name
	// +optional
	FaultSchedules []SuiteFaultSchedule `json:"faultSchedules,omitempty"`
}

// SuiteFaultSchedule is one fault schedule of a suite: a name for the
// cell names and tables, and the faults (spec.faults of a BenchmarkRun).
type SuiteFaultSchedule struct {
	// Name says the schedule in cell names (<suite>-<system>-l<level>-
	// <workload>-<name>) and in the tables: a DNS label of at most 12
	// characters, e.g. healthy or kill-b1.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=12
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// Faults are the cell's spec.faults; none: the cell runs without
	// faults (the baseline the others are read against).
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	Faults []Fault `json:"faults,omitempty"`
}

// SuiteSystem is one system of a suite: its cluster and the durability
// settings measured on it.
// +kubebuilder:validation:XValidation:rule="self.system == 'pulsar' || !has(self.cluster.managed) || (!has(self.cluster.managed.bookies) && !has(self.cluster.managed.metadataStoreReplicas))",message="spec.systems[].cluster.managed.bookies and metadataStoreReplicas apply to system pulsar only; remove them for kafka"
// +kubebuilder:validation:XValidation:rule="self.system == 'pulsar' || !has(self.cluster.existing) || has(self.cluster.existing.bootstrapServers) != has(self.cluster.existing.strimziCluster)",message="spec.systems[].cluster.existing: system kafka needs exactly one of bootstrapServers or strimziCluster"
// +kubebuilder:validation:XValidation:rule="self.system == 'pulsar' || !has(self.cluster.existing) || (!has(self.cluster.existing.serviceURL) && !has(self.cluster.existing.adminURL))",message="spec.systems[].cluster.existing.serviceURL and adminURL apply to system pulsar only; use bootstrapServers or strimziCluster for kafka"
// +kubebuilder:validation:XValidation:rule="self.system == 'kafka' || !has(self.cluster.existing) || (has(self.cluster.existing.serviceURL) && has(self.cluster.existing.adminURL))",message="spec.systems[].cluster.existing: system pulsar needs both serviceURL (pulsar://...) and adminURL (http://...)"
// +kubebuilder:validation:XValidation:rule="self.system == 'kafka' || !has(self.cluster.existing) || (!has(self.cluster.existing.bootstrapServers) && !has(self.cluster.existing.strimziCluster))",message="spec.systems[].cluster.existing.bootstrapServers and strimziCluster apply to system kafka only; use serviceURL and adminURL for pulsar"
// +kubebuilder:validation:XValidation:rule="self.system != 'kafka' || !has(self.cluster.managed) || self.durabilities.all(d, self.cluster.managed.brokers >= (has(d.replication) ? d.replication.replicas : 3))",message="spec.systems[].cluster.managed.brokers must be at least the replication factor of every durability setting (replication.replicas, 3 for a level); add brokers or lower replicas"
// +kubebuilder:validation:XValidation:rule="self.system != 'pulsar' || !has(self.cluster.managed) || self.durabilities.all(d, (has(self.cluster.managed.bookies) ? self.cluster.managed.bookies : 3) >= (has(d.replication) ? d.replication.replicas : 3))",message="spec.systems[].cluster.managed.bookies must be at least the ensemble size of every durability setting (replication.replicas, 3 for a level); add bookies or lower replicas"
// +kubebuilder:validation:XValidation:rule="self.system == 'kafka' || !has(self.cluster.managed) || !has(self.cluster.managed.storage) || !has(self.cluster.managed.storage.additionalData)",message="spec.systems[].cluster.managed.storage.additionalData (Kafka JBOD log directories) applies to system kafka only; use storage.journal and storage.ledgers for pulsar"
// +kubebuilder:validation:XValidation:rule="!has(self.driver) || !has(self.driver.kafka) || self.system == 'kafka'",message="spec.systems[].driver.kafka is set but the system is pulsar; move the settings to driver.pulsar"
// +kubebuilder:validation:XValidation:rule="!has(self.driver) || !has(self.driver.pulsar) || self.system == 'pulsar'",message="spec.systems[].driver.pulsar is set but the system is kafka; move the settings to driver.kafka"
// +kubebuilder:validation:XValidation:rule="!has(self.securities) || has(self.cluster.managed)",message="spec.systems[].securities applies to a managed cluster only (the suite deploys one per setting); an existing cluster's security is its own: set spec.systems[].cluster.existing.tls and authentication instead, or remove securities"
// +kubebuilder:validation:XValidation:rule="!has(self.securities) || !has(self.cluster.managed) || !has(self.cluster.managed.security)",message="spec.systems[].securities and cluster.managed.security both set the brokers' security; list every setting to measure in securities and remove cluster.managed.security"
// +kubebuilder:validation:XValidation:rule="!has(self.securities) || self.securities.all(s, !has(s.authentication) || (self.system == 'kafka') == (s.authentication in ['scram-sha-512', 'tls']))",message="spec.systems[].securities[].authentication: kafka takes scram-sha-512 or tls (a Strimzi KafkaUser); pulsar takes token"
// +kubebuilder:validation:XValidation:rule="!has(self.securities) || self.securities.all(s, !has(s.authentication) || s.authentication != 'tls' || (has(s.tls) && s.tls))",message="spec.systems[].securities[]: authentication tls is mutual TLS: set tls: true in the same entry"
// +kubebuilder:validation:XValidation:rule="!has(self.securities) || self.securities.all(a, self.securities.exists_one(b, (has(a.tls) && a.tls) == (has(b.tls) && b.tls) && has(a.authentication) == has(b.authentication) && (!has(a.authentication) || a.authentication == b.authentication)))",message="spec.systems[].securities lists one setting twice ({} and {tls: false} are the same plaintext, anonymous setting); remove one"
// +kubebuilder:validation:XValidation:rule="!has(self.cluster.managed) || !has(self.cluster.managed.security) || !has(self.cluster.managed.security.authentication) || (self.system == 'kafka') == (self.cluster.managed.security.authentication in ['scram-sha-512', 'tls'])",message="spec.systems[].cluster.managed.security.authentication: kafka takes scram-sha-512 or tls (a Strimzi KafkaUser); pulsar takes token"
type SuiteSystem struct {
	// System is the messaging system under test.
	System System `json:"system"`

	// Cluster is where the brokers come from. Managed: the suite deploys
	// one cluster per durability setting that needs its own broker
	// settings (one for Kafka, whose durability is topic and producer
	// configuration; one per journal configuration for Pulsar, whose
	// journal settings are the bookies') and per entry of securities, and
	// every cell runs against it in existing mode. Existing: every cell
	// runs against it as it is.
	Cluster ClusterSpec `json:"cluster"`

	// Durabilities are the settings to measure, e.g. levels 1 to 4.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	Durabilities []DurabilitySpec `json:"durabilities"`

	// Driver overrides client settings of this system in every cell.
	// +optional
	Driver *DriverSpec `json:"driver,omitempty"`

	// Securities are the client security settings to measure, each on a
	// cluster of its own (a listener's TLS and authentication are the
	// brokers' configuration), every cell of the system on each: e.g.
	// [{}, {tls: true}, {tls: true, authentication: scram-sha-512}]
	// measures what TLS and SCRAM cost. Each cell runs with its
	// cluster's credentials, which the suite's provisioning makes (as for
	// spec.cluster.managed.security of a run). With securities, the names
	// of clusters and cells carry the setting's label (plain, tls, scram,
	// tls-scram, mtls, token, tls-token); without, a suite measures the
	// one setting of cluster.managed.security (plaintext and anonymous
	// if unset) and its names carry none. Managed clusters only.
	// +kubebuilder:validation:MaxItems=4
	// +listType=atomic
	// +optional
	Securities []ManagedSecurity `json:"securities,omitempty"`
}

// SuiteWorkload is one workload of the suite: inline, or an OMB workload
// file kept in a ConfigMap.
// +kubebuilder:validation:XValidation:rule="has(self.spec) != has(self.configMapRef)",message="spec.workloads[]: set exactly one of spec (an inline workload) or configMapRef (an OMB workload file in a ConfigMap)"
type SuiteWorkload struct {
	// Name says the workload in cell names (<suite>-<system>-l<level>-<name>)
	// and in the tables: a DNS label of at most 16 characters, e.g. maxtput
	// or lat200k.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// Spec is the workload written inline.
	// +optional
	Spec *WorkloadSpec `json:"spec,omitempty"`

	// ConfigMapRef names an OMB workload file (workloads/*.yaml) in a
	// ConfigMap of the suite's namespace: kubectl create configmap NAME
	// --from-file=workloads/FILE.yaml. It is read once, when the suite
	// starts, into status.workloads.
	// +optional
	ConfigMapRef *ConfigMapFileRef `json:"configMapRef,omitempty"`
}

// ClusterPhase is where one of a suite's clusters is.
// +kubebuilder:validation:Enum=Waiting;Provisioning;Ready;TornDown;Kept;Failed
type ClusterPhase string

const (
	ClusterWaiting      ClusterPhase = "Waiting"
	ClusterProvisioning ClusterPhase = "Provisioning"
	ClusterReady        ClusterPhase = "Ready"
	ClusterTornDown     ClusterPhase = "TornDown"
	ClusterKept         ClusterPhase = "Kept"
	ClusterFailed       ClusterPhase = "Failed"
)

// SuiteCluster is one cluster the suite's cells run against.
type SuiteCluster struct {
	// Name is the deployed cluster's name (Strimzi Kafka name; the Pulsar
	// Helm release is <name>-pulsar); for an existing cluster, a label.
	Name string `json:"name"`
	// System of the cluster.
	System System `json:"system"`
	// Managed is true when the suite deployed the cluster.
	Managed bool `json:"managed"`
	// BrokerSettings are the broker (bookie) settings that set this
	// cluster apart from the system's other clusters; empty for a system
	// with one cluster.
	// +optional
	BrokerSettings map[string]string `json:"brokerSettings,omitempty"`
	// Security is the client security the cluster is deployed with:
	// an entry of spec.systems[].securities, or its
	// cluster.managed.security; absent for plaintext, anonymous brokers
	// of a system without securities, and for an existing cluster.
	// +optional
	Security *ManagedSecurity `json:"security,omitempty"`
	// Phase of the cluster.
	Phase ClusterPhase `json:"phase"`
	// Endpoints the cells use.
	// +optional
	Endpoints *BrokerEndpoints `json:"endpoints,omitempty"`
	// StartTime is when the suite started deploying it; the provisioning
	// deadline counts from here.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// Message says what the cluster waits for, or why it failed.
	// +optional
	Message string `json:"message,omitempty"`
}

// CellPhase is where one cell is.
// +kubebuilder:validation:Enum=Waiting;Running;Succeeded;Failed;Skipped
type CellPhase string

const (
	CellWaiting   CellPhase = "Waiting"
	CellRunning   CellPhase = "Running"
	CellSucceeded CellPhase = "Succeeded"
	CellFailed    CellPhase = "Failed"
	CellSkipped   CellPhase = "Skipped"
)

// Finished reports whether the cell will not change again.
func (p CellPhase) Finished() bool {
	return p == CellSucceeded || p == CellFailed || p == CellSkipped
}

// SuiteCell is one cell of the matrix: a system at a durability setting
// running a workload, as a child BenchmarkRun.
type SuiteCell struct {
	// Name is the child BenchmarkRun's name.
	Name string `json:"name"`
	// System, Workload (spec.workloads[].name) and Durability
	// (spec.systems[].durabilities[]) of the cell.
	System     System         `json:"system"`
	Workload   string         `json:"workload"`
	Durability DurabilitySpec `json:"durability"`
	// RequestedLevel is the level asked for (derived from explicit
	// settings when none was given).
	RequestedLevel Level `json:"requestedLevel"`
	// Security is the label of its cluster's client security (plain,
	// tls, scram, tls-scram, mtls, token, tls-token); empty for a system
	// without spec.systems[].securities whose brokers are plaintext and
	// anonymous, and for an existing cluster.
	// +optional
	Security string `json:"security,omitempty"`
	// FaultSchedule is the spec.faultSchedules[].name the cell runs
	// under; empty in a suite without fault schedules.
	// +optional
	FaultSchedule string `json:"faultSchedule,omitempty"`
	// Cluster is the status.clusters[].name the cell runs against.
	Cluster string `json:"cluster"`
	// Repeat is which of spec.repeats this entry is (from 1), and RepeatOf
	// the cell's name without it, which the tables use; both absent in a
	// suite not repeated.
	// +optional
	Repeat int32 `json:"repeat,omitempty"`
	// +optional
	RepeatOf string `json:"repeatOf,omitempty"`
	// Phase of the cell.
	Phase CellPhase `json:"phase"`
	// AchievedLevel is the child run's status.durability.achievedLevel.
	// +optional
	AchievedLevel Level `json:"achievedLevel,omitempty"`
	// Results are the headline figures of the child run.
	// +optional
	Results *CellResults `json:"results,omitempty"`
	// Message is the child run's last message (why it failed).
	// +optional
	Message string `json:"message,omitempty"`
}

// CellResults are a cell's headline figures, as the study's tables quote
// them.
type CellResults struct {
	// PublishMBPerSec is the publish throughput in MB/s (10^6 bytes).
	PublishMBPerSec float64 `json:"publishMBPerSec"`
	// PublishP99Ms is the publish latency p99 (ack - send).
	PublishP99Ms float64 `json:"publishP99Ms"`
	// EndToEndP99Ms is the end-to-end latency p99; absent for a
	// produce-only workload.
	// +optional
	EndToEndP99Ms *float64 `json:"endToEndP99Ms,omitempty"`
}

// ResolvedWorkload is a workload of the suite as its cells run it.
type ResolvedWorkload struct {
	Name string       `json:"name"`
	Spec WorkloadSpec `json:"spec"`
}

// BenchmarkSuiteStatus is the progress of the matrix and its results.
type BenchmarkSuiteStatus struct {
	// Phase: Pending, Running, then Succeeded (every cell succeeded) or
	// Failed (a cell failed, or the suite could not start).
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// Progress is finished cells / all cells, e.g. 7/16.
	// +optional
	Progress string `json:"progress,omitempty"`
	// CurrentCell is the cell running now.
	// +optional
	CurrentCell string `json:"currentCell,omitempty"`
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Workloads are spec.workloads with ConfigMap files read, kept here so
	// a changed or deleted ConfigMap cannot change a suite under way.
	// +optional
	// +listType=atomic
	Workloads []ResolvedWorkload `json:"workloads,omitempty"`
	// Clusters the cells run against, in the order they are used.
	// +optional
	// +listType=atomic
	Clusters []SuiteCluster `json:"clusters,omitempty"`
	// Cells in the order they run: grouped by cluster so each cluster is
	// deployed once.
	// +optional
	// +listType=atomic
	Cells []SuiteCell `json:"cells,omitempty"`
	// ResultsRef names the ConfigMap with every cell's summary and the
	// comparison tables.
	// +optional
	ResultsRef string `json:"resultsRef,omitempty"`
	// Message says what happened last.
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=bs;suite,categories=streambench
// +kubebuilder:printcolumn:name="Progress",type=string,JSONPath=`.status.progress`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Current",type=string,priority=1,JSONPath=`.status.currentCell`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 20",message="metadata.name must be at most 20 characters: cells are BenchmarkRuns named <suite>-<system>-l<level>-<workload> (40 characters at most); use a shorter name"

// BenchmarkSuite is a matrix of BenchmarkRuns (systems × durability
// settings × workloads) measured one at a time on shared clusters, so one
// table is measured on one testbed.
type BenchmarkSuite struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable after creation; to run again, create a new BenchmarkSuite (metadata.generateName)"
	Spec   BenchmarkSuiteSpec   `json:"spec"`
	Status BenchmarkSuiteStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// BenchmarkSuiteList is a list of BenchmarkSuites.
type BenchmarkSuiteList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BenchmarkSuite `json:"items"`
}

func init() {
	SchemeBuilder.Register(&BenchmarkSuite{}, &BenchmarkSuiteList{})
}

// SetCondition sets a condition, stamping it with the suite's generation.
func (s *BenchmarkSuite) SetCondition(condType string, status metav1.ConditionStatus, reason, message string) bool {
	return setCondition(&s.Status.Conditions, s.Generation, condType, status, reason, message)
}

// MoveTo moves the suite to the next phase if that is a forward move, and
// reports whether it did.
func (s *BenchmarkSuite) MoveTo(next Phase, message string) bool {
	if !s.Status.Phase.CanMoveTo(next) {
		return false
	}
	s.Status.Phase = next
	s.Status.Message = message
	return true
}
