// Package durability translates a run's durability spec into the settings
// each system needs, following the durability levels of Table 1-6 and the
// per-system settings of Tables 1-7 to 1-13 of the durability study
// (docs/methodology.md).
//
// The translation is pure: no API calls, no I/O. The controller stores the
// result in status.durability, the provisioning layer applies the broker and
// bookie maps, and the worker's drivers apply the topic, producer and
// namespace settings.
//
// The source studies' consumer fix (Pulsar maxTotalReceiverQueueSizeAcrossPartitions
// raised to 5000000) is deliberately not here: it is client flow control, not
// durability, and pulsar-client-go (the client the worker uses) has no such
// setting. Its partitioned consumer gives every partition the full
// ReceiverQueueSize instead of dividing a total across partitions, so the
// Java client's throttling that the study fixed cannot happen; the Pulsar
// driver only needs OMB's receiverQueueSize.
package durability

import (
	"errors"
	"fmt"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// Defaults of explicit settings; they match the CRD's +kubebuilder:default
// markers and Table 1-12 of the study (3 replicas, 2 must have a write).
const (
	DefaultReplicas    int32 = 3
	DefaultAckReplicas int32 = 2
	// MaxReplicas mirrors the CRD's maximum for replicas and ackReplicas.
	MaxReplicas int32 = 7
	// DefaultPulsarJournalFlushIntervalMs is journalPageCacheFlushIntervalMSec
	// for async local durability with the journal: Table 1-13 uses 1000,
	// which the study equates with a 5 s pdflush interval on Kafka.
	DefaultPulsarJournalFlushIntervalMs int32 = 1000
)

// Kafka configuration keys set by Translate. The driver and the
// provisioning layer read the maps by these names.
const (
	// Topic keys.
	KafkaTopicMinInsyncReplicas = "min.insync.replicas"
	KafkaTopicFlushMessages     = "flush.messages"
	KafkaTopicFlushMs           = "flush.ms"
	KafkaTopicUncleanElection   = "unclean.leader.election.enable"

	// Broker keys.
	KafkaBrokerDefaultReplicationFactor = "default.replication.factor"
	KafkaBrokerMinInsyncReplicas        = "min.insync.replicas"
	KafkaBrokerUncleanElection          = "unclean.leader.election.enable"
	KafkaBrokerFlushIntervalMessages    = "log.flush.interval.messages"
	KafkaBrokerFlushIntervalMs          = "log.flush.interval.ms"
	KafkaBrokerFlushSchedulerIntervalMs = "log.flush.scheduler.interval.ms"

	// Producer keys.
	KafkaProducerAcks        = "acks"
	KafkaProducerIdempotence = "enable.idempotence"
)

// Pulsar configuration keys set by Translate, in the plain form of
// bookkeeper.conf and broker.conf (the Helm layer adds PULSAR_PREFIX_).
const (
	// Bookie keys (Tables 1-9 and 1-13).
	PulsarBookieJournalWriteData          = "journalWriteData"
	PulsarBookieJournalSyncData           = "journalSyncData"
	PulsarBookieJournalMaxGroupWaitMSec   = "journalMaxGroupWaitMSec"
	PulsarBookieJournalPageCacheFlushMSec = "journalPageCacheFlushIntervalMSec"

	// Broker keys.
	// PulsarBrokerDelayEnsembleChange reaches the broker's BookKeeper
	// client (bookkeeper_ keys do): not set by Translate, but read where a
	// run's failure tolerance is (ToleranceOf through the testbed).
	PulsarBrokerDelayEnsembleChange        = "bookkeeper_delayEnsembleChange"
	PulsarBrokerEnsembleSize               = "managedLedgerDefaultEnsembleSize"
	PulsarBrokerWriteQuorum                = "managedLedgerDefaultWriteQuorum"
	PulsarBrokerAckQuorum                  = "managedLedgerDefaultAckQuorum"
	PulsarBrokerNewEntriesCheckDelayMillis = "managedLedgerNewEntriesCheckDelayInMillis"
	PulsarBrokerChannelsPerBookie          = "bookkeeperNumberOfChannelsPerBookie"
)

// The keys the durability owns, per place a spec could set them. The CRD
// refuses them there (the CEL rules of ManagedCluster and KafkaDriver in
// api/v1alpha1, which cannot name Go constants; internal/admission's tests
// hold the two lists equal), and the drivers refuse them again when a run
// was built without the API server, so status.durability stays true.
var (
	// RefusedBrokerConfigKeys: spec.cluster.managed.brokerConfig, shared by
	// Kafka brokers and Pulsar brokers.
	RefusedBrokerConfigKeys = []string{KafkaBrokerMinInsyncReplicas, KafkaBrokerDefaultReplicationFactor, KafkaBrokerUncleanElection,
		KafkaBrokerFlushIntervalMessages, KafkaBrokerFlushIntervalMs, KafkaBrokerFlushSchedulerIntervalMs,
		PulsarBrokerEnsembleSize, PulsarBrokerWriteQuorum, PulsarBrokerAckQuorum}
	// RefusedBookieConfigKeys: spec.cluster.managed.bookieConfig.
	RefusedBookieConfigKeys = []string{PulsarBookieJournalWriteData, PulsarBookieJournalSyncData,
		PulsarBookieJournalMaxGroupWaitMSec, PulsarBookieJournalPageCacheFlushMSec}
	// RefusedKafkaProducerKeys: spec.driver.kafka.producer.
	RefusedKafkaProducerKeys = []string{KafkaProducerAcks, KafkaProducerIdempotence}
	// RefusedKafkaTopicKeys: spec.driver.kafka.topic.
	RefusedKafkaTopicKeys = []string{KafkaTopicMinInsyncReplicas, KafkaTopicFlushMessages, KafkaTopicFlushMs, KafkaTopicUncleanElection}
)

// Resolved is a durability spec with the level expanded and every default
// applied: the explicit form of what the run asks for, before any system
// has had its say.
type Resolved struct {
	// Level is the requested level: the spec's level, or LevelOf the
	// explicit modes.
	Level       v1alpha1.Level
	Replicas    int32
	AckReplicas int32
	Replication v1alpha1.ReplicationMode
	Local       v1alpha1.LocalMode
	Journal     v1alpha1.JournalMode
	// FlushIntervalMs is the async flush interval; 0 means the system's
	// default (Pulsar 1000 ms, Kafka the broker's).
	FlushIntervalMs int32
}

// LevelOf maps replication and local modes to the level of Table 1-6.
// Anything but Async counts as Sync; Resolve rejects other values first.
func LevelOf(r v1alpha1.ReplicationMode, l v1alpha1.LocalMode) v1alpha1.Level {
	switch {
	case r != v1alpha1.ReplicationAsync && l != v1alpha1.LocalAsync:
		return v1alpha1.Level1
	case r != v1alpha1.ReplicationAsync:
		return v1alpha1.Level2
	case l != v1alpha1.LocalAsync:
		return v1alpha1.Level3
	default:
		return v1alpha1.Level4
	}
}

// ModesOf is the inverse of LevelOf: the replication and local modes of a
// level of Table 1-6. ok is false for a level outside 1..4.
func ModesOf(level v1alpha1.Level) (r v1alpha1.ReplicationMode, l v1alpha1.LocalMode, ok bool) {
	switch level {
	case v1alpha1.Level1:
		return v1alpha1.ReplicationSync, v1alpha1.LocalSync, true
	case v1alpha1.Level2:
		return v1alpha1.ReplicationSync, v1alpha1.LocalAsync, true
	case v1alpha1.Level3:
		return v1alpha1.ReplicationAsync, v1alpha1.LocalSync, true
	case v1alpha1.Level4:
		return v1alpha1.ReplicationAsync, v1alpha1.LocalAsync, true
	}
	return "", "", false
}

// Resolve validates spec and expands it to explicit settings. Specs may come
// from local YAML files that never went through the API server, so it checks
// what the CRD's schema and CEL rules check, and reports every problem with
// the field path and the fix. Unlike the CRD, it never defaults a missing
// level: a Go caller that forgot the durability must not get level 2 silently.
func Resolve(spec v1alpha1.DurabilitySpec) (Resolved, error) {
	explicit := spec.Replication != nil || spec.Local != nil
	switch {
	case spec.Level != nil && explicit:
		return Resolved{}, errors.New("spec.durability: set either level or replication/local, not both; remove level to use explicit settings, or remove replication and local to use the level")
	case spec.Level != nil:
		return resolveLevel(*spec.Level)
	case !explicit:
		return Resolved{}, errors.New("spec.durability: neither level nor replication/local is set; set level (1-4), or both replication and local")
	case spec.Local == nil:
		return Resolved{}, errors.New("spec.durability.local is required when spec.durability.replication is set; add local.mode (Sync or Async), or use level instead")
	case spec.Replication == nil:
		return Resolved{}, errors.New("spec.durability.replication is required when spec.durability.local is set; add replication.mode (Sync or Async), or use level instead")
	}
	return resolveExplicit(*spec.Replication, *spec.Local)
}

func resolveLevel(level v1alpha1.Level) (Resolved, error) {
	r, l, ok := ModesOf(level)
	if !ok {
		return Resolved{}, fmt.Errorf("spec.durability.level (%d) must be 1, 2, 3 or 4 (Table 1-6: 1 = sync replication + sync local, 4 = async + async); choose one of them", level)
	}
	return Resolved{
		Level:       level,
		Replicas:    DefaultReplicas,
		AckReplicas: DefaultAckReplicas,
		Replication: r,
		Local:       l,
		Journal:     v1alpha1.JournalWrite,
	}, nil
}

func resolveExplicit(rep v1alpha1.ReplicationDurability, loc v1alpha1.LocalDurability) (Resolved, error) {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	replicas, ackReplicas := rep.Replicas, rep.AckReplicas
	if replicas == 0 {
		replicas = DefaultReplicas
	}
	if ackReplicas == 0 {
		ackReplicas = DefaultAckReplicas
	}
	countsOK := true
	if replicas < 1 || replicas > MaxReplicas {
		bad("spec.durability.replication.replicas (%d) must be between 1 and %d; set it in that range or remove it for the default %d", replicas, MaxReplicas, DefaultReplicas)
		countsOK = false
	}
	if ackReplicas < 1 || ackReplicas > MaxReplicas {
		bad("spec.durability.replication.ackReplicas (%d) must be between 1 and %d; set it in that range or remove it for the default %d", ackReplicas, MaxReplicas, DefaultAckReplicas)
		countsOK = false
	}
	if countsOK && ackReplicas > replicas {
		bad("spec.durability.replication.ackReplicas (%d) must not exceed replicas (%d); lower ackReplicas or raise replicas", ackReplicas, replicas)
	}
	switch rep.Mode {
	case v1alpha1.ReplicationSync:
		// Table 1-7: sync replication needs a majority to ack
		// (ackQuorumSize >= writeQuorumSize/2 + 1).
		if countsOK && ackReplicas*2 <= replicas {
			bad("spec.durability.replication: mode Sync needs ackReplicas (%d) to be a majority of replicas (%d), at least %d; raise ackReplicas or use mode Async", ackReplicas, replicas, replicas/2+1)
		}
	case v1alpha1.ReplicationAsync:
	case "":
		bad("spec.durability.replication.mode is required; set Sync or Async")
	default:
		bad("spec.durability.replication.mode %q is not a mode; set Sync or Async (capitalized)", rep.Mode)
	}

	journal := loc.Journal
	if journal == "" {
		journal = v1alpha1.JournalWrite
	}
	if journal != v1alpha1.JournalWrite && journal != v1alpha1.JournalBypass {
		bad("spec.durability.local.journal %q is not a journal mode; set Write or Bypass (capitalized), or remove it for Write", loc.Journal)
	}
	var flush int32
	if loc.FlushIntervalMs != nil {
		flush = *loc.FlushIntervalMs
		if flush < 1 {
			bad("spec.durability.local.flushIntervalMs (%d) must be at least 1; raise it or remove it for the system's default", flush)
		}
	}
	switch loc.Mode {
	case v1alpha1.LocalSync:
		if journal == v1alpha1.JournalBypass {
			bad("spec.durability.local: mode Sync needs the journal (with journal Bypass a bookie acks before any fsync); remove journal: Bypass or use mode Async")
		}
		if loc.FlushIntervalMs != nil {
			bad("spec.durability.local.flushIntervalMs applies to mode Async only (a sync write is flushed before its ack); remove it or use mode Async")
		}
	case v1alpha1.LocalAsync:
		// Stricter than the CRD: with the journal bypassed a bookie acks
		// from its ledger storage, so journalPageCacheFlushIntervalMSec
		// has nothing to flush and the interval would be silently
		// ignored on Pulsar while Kafka honoured it.
		if journal == v1alpha1.JournalBypass && loc.FlushIntervalMs != nil {
			bad("spec.durability.local.flushIntervalMs applies to journal Write only (with journal Bypass Pulsar has no journal to flush, so the run would not mean the same on both systems); remove flushIntervalMs or use journal Write")
		}
	case "":
		bad("spec.durability.local.mode is required; set Sync or Async")
	default:
		bad("spec.durability.local.mode %q is not a mode; set Sync or Async (capitalized)", loc.Mode)
	}

	if len(errs) > 0 {
		return Resolved{}, errors.Join(errs...)
	}
	return Resolved{
		Level:           LevelOf(rep.Mode, loc.Mode),
		Replicas:        replicas,
		AckReplicas:     ackReplicas,
		Replication:     rep.Mode,
		Local:           loc.Mode,
		Journal:         journal,
		FlushIntervalMs: flush,
	}, nil
}

// Translate returns the effective durability for system, or an error that
// names the spec field and the fix. Every level is achieved as configured
// (Kafka's levels 1 and 3 too: see kafka.go); whether the broker
// version at hand was verified by the sync-delay experiment is added by
// TranslateFor (or Establish), which the controller and local mode use.
func Translate(system v1alpha1.System, spec v1alpha1.DurabilitySpec) (v1alpha1.EffectiveDurability, error) {
	if system != v1alpha1.SystemKafka && system != v1alpha1.SystemPulsar {
		return v1alpha1.EffectiveDurability{}, fmt.Errorf("spec.system %q is not supported; set kafka or pulsar", system)
	}
	r, err := Resolve(spec)
	if err != nil {
		return v1alpha1.EffectiveDurability{}, err
	}
	eff := pulsar(r)
	if system == v1alpha1.SystemKafka {
		eff = kafka(r)
	}
	return eff, nil
}
