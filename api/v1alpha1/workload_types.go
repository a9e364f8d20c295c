package v1alpha1

// KeyDistributor is OMB's choice of message keys.
// +kubebuilder:validation:Enum=NO_KEY;KEY_ROUND_ROBIN;RANDOM_NANO
type KeyDistributor string

const (
	// KeyNone sends null keys.
	KeyNone KeyDistributor = "NO_KEY"
	// KeyRoundRobin cycles through 10,000 random 7-byte keys.
	KeyRoundRobin KeyDistributor = "KEY_ROUND_ROBIN"
	// KeyRandomNano picks one of 10,000 random 7-byte keys at random.
	KeyRandomNano KeyDistributor = "RANDOM_NANO"
)

// WorkloadSpec is an OpenMessaging Benchmark workload, with OMB's field names
// and meanings, so an OMB workload file can be used as it is. Fields that
// OMB declares as integers accept fractions here (e.g. testDurationMinutes:
// 0.5) so that short local and CI runs can be written with the same names.
// +kubebuilder:validation:XValidation:rule="!(has(self.consumerBacklogSizeGB) && self.consumerBacklogSizeGB > 0.0 && self.producerRate == 0)",message="spec.workload.consumerBacklogSizeGB needs a fixed producerRate (> 0): a backlog cannot be built while the maximum rate is searched; set producerRate"
// +kubebuilder:validation:XValidation:rule="!has(self.useRandomizedPayloads) || !self.useRandomizedPayloads || !has(self.randomizedPayloadPoolSize) || self.randomizedPayloadPoolSize * self.messageSize <= 268435456",message="spec.workload.randomizedPayloadPoolSize x messageSize must be at most 256 MiB: every worker holds the pool in memory; lower randomizedPayloadPoolSize"
// +kubebuilder:validation:XValidation:rule="!has(self.mixed) || (has(self.consumerBacklogSizeGB) && self.consumerBacklogSizeGB > 0.0)",message="spec.workload.mixed needs consumerBacklogSizeGB > 0: the catch-up subscriptions drain that backlog; set consumerBacklogSizeGB"
// +kubebuilder:validation:XValidation:rule="!has(self.rateSearch) || self.producerRate == 0",message="spec.workload.rateSearch tunes the maximum-rate search, which runs only with producerRate 0; set producerRate to 0 or remove rateSearch"
type WorkloadSpec struct {
	// Name is a label copied into the results.
	// +optional
	Name string `json:"name,omitempty"`

	// Topics is the number of topics.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	Topics int32 `json:"topics,omitempty"`

	// PartitionsPerTopic is the number of partitions of each topic (Pulsar:
	// 1 means a non-partitioned topic).
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	PartitionsPerTopic int32 `json:"partitionsPerTopic,omitempty"`

	// KeyDistributor chooses message keys.
	// +kubebuilder:default=NO_KEY
	// +optional
	KeyDistributor KeyDistributor `json:"keyDistributor,omitempty"`

	// MessageSize is the size of each message in bytes: at least 32 (every
	// message carries a 32-byte header with its send time, producer id and
	// sequence number), at most 16 MiB (above any broker's default limit,
	// and each worker holds its payloads in memory).
	// +kubebuilder:validation:Minimum=32
	// +kubebuilder:validation:Maximum=16777216
	MessageSize int32 `json:"messageSize"`

	// PayloadFile is a file whose bytes are the payload; its length must
	// equal messageSize. Empty means a generated payload. Locally it is
	// looked for where OMB looks (the working directory), then next to the
	// workload file; in a cluster spec.payload.configMapRef gives its bytes.
	// +optional
	PayloadFile string `json:"payloadFile,omitempty"`

	// UseRandomizedPayloads draws payloads from a pool of partly random
	// messages (compression tests).
	// +optional
	UseRandomizedPayloads bool `json:"useRandomizedPayloads,omitempty"`

	// RandomBytesRatio is the random fraction of each randomized payload.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	// +optional
	RandomBytesRatio *float64 `json:"randomBytesRatio,omitempty"`

	// RandomizedPayloadPoolSize is the number of payloads in the pool; each
	// worker holds the pool in memory, so pool size x messageSize is bounded
	// (256 MiB).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000
	// +optional
	RandomizedPayloadPoolSize *int32 `json:"randomizedPayloadPoolSize,omitempty"`

	// SubscriptionsPerTopic is the number of subscriptions (consumer groups)
	// per topic; 0 is a produce-only run.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	SubscriptionsPerTopic *int32 `json:"subscriptionsPerTopic,omitempty"`

	// ConsumerPerSubscription is the number of consumers of each
	// subscription.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	ConsumerPerSubscription int32 `json:"consumerPerSubscription,omitempty"`

	// ProducersPerTopic is the number of producers per topic.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	ProducersPerTopic int32 `json:"producersPerTopic,omitempty"`

	// ProducerRate is the total publish rate in messages per second over all
	// workers; 0 (OMB's default) searches the maximum sustainable rate.
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +optional
	ProducerRate int64 `json:"producerRate"`

	// ConsumerBacklogSizeGB, when above 0, pauses the consumers until this
	// backlog is built, then measures its drain. The unit is OMB's: GiB
	// (2^30 bytes), whatever the name says.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ConsumerBacklogSizeGB *float64 `json:"consumerBacklogSizeGB,omitempty"`

	// BacklogDrainRatio is the fraction of the backlog that must drain.
	// +kubebuilder:default=1.0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	// +optional
	BacklogDrainRatio *float64 `json:"backlogDrainRatio,omitempty"`

	// TestDurationMinutes is the length of the measured phase.
	// +kubebuilder:default=5
	// +kubebuilder:validation:ExclusiveMinimum=true
	// +kubebuilder:validation:Minimum=0
	// +optional
	TestDurationMinutes *float64 `json:"testDurationMinutes,omitempty"`

	// WarmupDurationMinutes is the discarded warm-up before the measured
	// phase.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	WarmupDurationMinutes *float64 `json:"warmupDurationMinutes,omitempty"`

	// Mixed (a streambench extension) adds catch-up subscriptions that drain
	// the backlog while the tailing subscriptions keep reading; publish
	// latency during the drain is reported on its own.
	// +optional
	Mixed *MixedWorkload `json:"mixed,omitempty"`

	// RateSearch (a streambench extension) sets what the maximum-rate
	// search (producerRate 0) calls sustainable. Unset fields take the
	// defaults described on each.
	// +optional
	RateSearch *RateSearchSpec `json:"rateSearch,omitempty"`
}

// RateSearchSpec sets the maximum-rate search's judgment. The search
// brackets the rate in short periods, then accepts a rate only after it
// held, judged as one window, for HoldSeconds with its corrected p99 publish
// latency within MaxP99LatencyMs; a rate that fails the hold is lowered and
// held again.
type RateSearchSpec struct {
	// HoldSeconds is how long the rate found must hold before it counts as
	// sustainable. Short periods miss what the brokers defer: Linux writes
	// dirty pages back once they are 30 s old (vm.dirty_expire_centisecs)
	// on a flusher that wakes every 5 s, and BookKeeper flushes its ledger
	// storage every 60 s (Pulsar's bookkeeper.conf). The default is the
	// longest of those the system has: 35 s for Kafka, 60 s for Pulsar.
	// Set it when the brokers' hosts or settings defer longer (a
	// durability flushIntervalMs above 30 s, a raised dirty_expire).
	// +kubebuilder:validation:Minimum=3
	// +kubebuilder:validation:Maximum=600
	// +optional
	HoldSeconds *int32 `json:"holdSeconds,omitempty"`

	// MaxP99LatencyMs bounds the p99 publish latency corrected for
	// coordinated omission (acknowledgement minus intended send time) over
	// the hold: a rate whose latency exceeds it is not sustainable, so the
	// search finds the highest rate that meets it. Default 1000: a system
	// that keeps its queues short keeps it far below that, one that falls
	// behind passes it within seconds.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:ExclusiveMinimum=true
	// +optional
	MaxP99LatencyMs *float64 `json:"maxP99LatencyMs,omitempty"`
}

// MixedWorkload describes the catch-up side of the mixed workload.
type MixedWorkload struct {
	// CatchUpSubscriptionsPerTopic is the number of subscriptions per topic
	// that stay paused while the backlog builds and then drain it; the
	// subscriptionsPerTopic subscriptions keep tailing throughout.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	CatchUpSubscriptionsPerTopic int32 `json:"catchUpSubscriptionsPerTopic,omitempty"`
}
