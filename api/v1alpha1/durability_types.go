package v1alpha1

// Level is a durability level of Table 1-6 in the durability study
// (docs/methodology.md): 1 is the strongest (sync replication and sync
// local), 4 the weakest.
// +kubebuilder:validation:Minimum=1
// +kubebuilder:validation:Maximum=4
type Level int32

const (
	// Level1 acks after at least a majority replicated and each replica
	// fsynced (Kafka's acks=all waits for every in-sync replica, Pulsar's
	// ack quorum for that many bookies: docs/methodology.md).
	Level1 Level = 1
	// Level2 acks after at least a majority replicated, with no fsync
	// guarantee.
	Level2 Level = 2
	// Level3 acks after one replica fsynced.
	Level3 Level = 3
	// Level4 acks immediately.
	Level4 Level = 4
)

// ReplicationMode says whether a write is acknowledged before or after a
// majority of replicas have it.
// +kubebuilder:validation:Enum=Sync;Async
type ReplicationMode string

const (
	ReplicationSync  ReplicationMode = "Sync"
	ReplicationAsync ReplicationMode = "Async"
)

// LocalMode says whether a write is acknowledged before or after it is
// fsynced to the local disk of a replica.
// +kubebuilder:validation:Enum=Sync;Async
type LocalMode string

const (
	LocalSync  LocalMode = "Sync"
	LocalAsync LocalMode = "Async"
)

// JournalMode says whether Pulsar bookies write entries to their journal
// (Write) or skip it (Bypass). Kafka has no journal; for Kafka both values
// mean the same thing.
// +kubebuilder:validation:Enum=Write;Bypass
type JournalMode string

const (
	JournalWrite  JournalMode = "Write"
	JournalBypass JournalMode = "Bypass"
)

// DurabilitySpec is either a level or explicit replication and local settings.
// +kubebuilder:validation:XValidation:rule="!(has(self.level) && (has(self.replication) || has(self.local)))",message="spec.durability: set either level or replication/local, not both; remove level to use explicit settings"
// +kubebuilder:validation:XValidation:rule="has(self.level) || (has(self.replication) && has(self.local))",message="spec.durability: set level (1-4), or both replication and local"
type DurabilitySpec struct {
	// Level is a durability level of Table 1-6 of the durability study
	// (docs/methodology.md):
	// 1 = sync replication + sync local, 2 = sync + async, 3 = async + sync,
	// 4 = async + async. Mutually exclusive with replication and local.
	// +optional
	Level *Level `json:"level,omitempty"`

	// Replication sets replication durability explicitly.
	// +optional
	Replication *ReplicationDurability `json:"replication,omitempty"`

	// Local sets local (disk) durability explicitly.
	// +optional
	Local *LocalDurability `json:"local,omitempty"`
}

// ReplicationDurability is explicit replication durability.
// +kubebuilder:validation:XValidation:rule="self.ackReplicas <= self.replicas",message="spec.durability.replication.ackReplicas must not exceed replicas; lower ackReplicas or raise replicas"
// +kubebuilder:validation:XValidation:rule="self.mode != 'Sync' || self.ackReplicas * 2 > self.replicas",message="spec.durability.replication: mode Sync needs ackReplicas to be a majority of replicas (ackReplicas > replicas/2); raise ackReplicas or use mode Async"
type ReplicationDurability struct {
	// Replicas is the number of copies: Kafka's replication factor, Pulsar's
	// ensemble size and write quorum.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=7
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// AckReplicas is how many replicas must have a write: Kafka's
	// min.insync.replicas, Pulsar's ack quorum when mode is Sync.
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=7
	// +optional
	AckReplicas int32 `json:"ackReplicas,omitempty"`

	// Mode Sync acks after ackReplicas replicas have the write (Kafka
	// acks=all, Pulsar ack quorum = ackReplicas); Async acks after one
	// (Kafka acks=1, Pulsar ack quorum 1).
	Mode ReplicationMode `json:"mode"`
}

// LocalDurability is explicit local durability.
// +kubebuilder:validation:XValidation:rule="!(self.mode == 'Sync' && has(self.journal) && self.journal == 'Bypass')",message="spec.durability.local: mode Sync needs the journal; remove journal: Bypass or use mode Async"
// +kubebuilder:validation:XValidation:rule="!(self.mode == 'Sync' && has(self.flushIntervalMs))",message="spec.durability.local.flushIntervalMs applies to mode Async only (a sync write is flushed before its ack); remove it or use mode Async"
// +kubebuilder:validation:XValidation:rule="!(has(self.journal) && self.journal == 'Bypass' && has(self.flushIntervalMs))",message="spec.durability.local.flushIntervalMs has no journal to flush with journal: Bypass (Pulsar would ignore it while Kafka applied it); remove flushIntervalMs or use journal: Write"
type LocalDurability struct {
	// Mode Sync acks only after the write is fsynced; Async acks before.
	Mode LocalMode `json:"mode"`

	// Journal chooses whether Pulsar bookies write to their journal (Write)
	// or bypass it (Bypass, only with mode Async; the study's match for
	// Kafka's default local durability).
	// +kubebuilder:default=Write
	// +optional
	Journal JournalMode `json:"journal,omitempty"`

	// FlushIntervalMs is how often data is flushed to disk in mode Async:
	// Pulsar's journalPageCacheFlushIntervalMSec (default 1000) and Kafka's
	// flush.ms (default: the broker's).
	// +kubebuilder:validation:Minimum=1
	// +optional
	FlushIntervalMs *int32 `json:"flushIntervalMs,omitempty"`
}

// Verification says how an achieved durability level was established.
// +kubebuilder:validation:Enum=Verified;NotVerified
type Verification string

const (
	// Verified: the sync-delay experiment showed, on this system and broker
	// version, that the level's acknowledgements wait for a local sync
	// exactly when the level promises one.
	Verified Verification = "Verified"
	// NotVerified: the level is what the settings promise; no experiment
	// covers this broker version (or the version is not known).
	NotVerified Verification = "NotVerified"
)

// EffectiveDurability is what a run really gets, per component.
type EffectiveDurability struct {
	// RequestedLevel is the level asked for (derived from explicit settings
	// when no level was given).
	RequestedLevel Level `json:"requestedLevel"`
	// AchievedLevel is the level the system really provides with the
	// settings below; lower than requested (a larger number) when the system
	// cannot provide what was asked.
	AchievedLevel Level `json:"achievedLevel"`
	// Replication, Local and Journal are the achieved modes.
	Replication ReplicationMode `json:"replication"`
	Local       LocalMode       `json:"local"`
	// +optional
	Journal JournalMode `json:"journal,omitempty"`
	// Explanation says how the achieved level was established (the
	// experiment that verified it, or that it is as configured and not
	// verified) and, when it differs from the requested level, why.
	// +optional
	Explanation string `json:"explanation,omitempty"`
	// BrokerVersion is the broker version the level applies to: the
	// managed cluster's version, or what an existing cluster reported;
	// empty when it is not known.
	// +optional
	BrokerVersion string `json:"brokerVersion,omitempty"`
	// Verification says whether the achieved level was measured: Verified
	// when the sync-delay experiment (docs/methodology.md) covers this
	// system and broker version, NotVerified when the level is only what
	// the settings promise.
	// +optional
	Verification Verification `json:"verification,omitempty"`
	// Kafka holds the Kafka settings when the system is kafka.
	// +optional
	Kafka *KafkaDurability `json:"kafka,omitempty"`
	// Pulsar holds the Pulsar settings when the system is pulsar.
	// +optional
	Pulsar *PulsarDurability `json:"pulsar,omitempty"`
}

// KafkaDurability is the durability translated into Kafka configuration.
type KafkaDurability struct {
	// ReplicationFactor of every benchmark topic.
	ReplicationFactor int32 `json:"replicationFactor"`
	// Topic configuration (min.insync.replicas, flush.messages, flush.ms).
	// +optional
	Topic map[string]string `json:"topic,omitempty"`
	// Broker configuration for managed clusters.
	// +optional
	Broker map[string]string `json:"broker,omitempty"`
	// Producer configuration (acks).
	// +optional
	Producer map[string]string `json:"producer,omitempty"`
}

// PulsarDurability is the durability translated into Pulsar configuration.
type PulsarDurability struct {
	// EnsembleSize, WriteQuorum and AckQuorum form the namespace persistence
	// policy of the run's namespace.
	EnsembleSize int32 `json:"ensembleSize"`
	WriteQuorum  int32 `json:"writeQuorum"`
	AckQuorum    int32 `json:"ackQuorum"`
	// Bookie configuration (journal settings).
	// +optional
	Bookie map[string]string `json:"bookie,omitempty"`
	// Broker configuration (managed-ledger defaults and the source studies' fairness
	// fixes).
	// +optional
	Broker map[string]string `json:"broker,omitempty"`
}
