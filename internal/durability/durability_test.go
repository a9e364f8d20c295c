package durability

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	v1 "github.com/streambench/streambench-operator/api/v1alpha1"
)

// Spec builders. Expected maps below are written out with literal keys (not
// the package's constants) so a misspelt constant fails here too.

func level(l v1.Level) v1.DurabilitySpec { return v1.DurabilitySpec{Level: &l} }

func explicit(rep v1.ReplicationDurability, loc v1.LocalDurability) v1.DurabilitySpec {
	return v1.DurabilitySpec{Replication: &rep, Local: &loc}
}

func rep(mode v1.ReplicationMode, replicas, ackReplicas int32) v1.ReplicationDurability {
	return v1.ReplicationDurability{Mode: mode, Replicas: replicas, AckReplicas: ackReplicas}
}

func loc(mode v1.LocalMode, journal v1.JournalMode) v1.LocalDurability {
	return v1.LocalDurability{Mode: mode, Journal: journal}
}

func locFlush(mode v1.LocalMode, journal v1.JournalMode, ms int32) v1.LocalDurability {
	return v1.LocalDurability{Mode: mode, Journal: journal, FlushIntervalMs: &ms}
}

func i32(n int32) *int32 { return &n }

// Expected-value builders.

// kv turns "k1", "v1", "k2", "v2" into a map.
func kv(pairs ...string) map[string]string {
	m := make(map[string]string, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		m[pairs[i]] = pairs[i+1]
	}
	return m
}

// merge returns base with extra's keys added.
func merge(base map[string]string, extra ...string) map[string]string {
	m := kv(extra...)
	for k, v := range base {
		m[k] = v
	}
	return m
}

func kafkaTopic(minISR string, extra ...string) map[string]string {
	return merge(kv("min.insync.replicas", minISR, "unclean.leader.election.enable", "false"), extra...)
}

func kafkaBroker(rf, minISR string, extra ...string) map[string]string {
	return merge(kv(
		"default.replication.factor", rf,
		"min.insync.replicas", minISR,
		"unclean.leader.election.enable", "false",
	), extra...)
}

var (
	kafkaProducerSync  = kv("acks", "all", "enable.idempotence", "true")
	kafkaProducerAsync = kv("acks", "1", "enable.idempotence", "false")

	// Table 1-13's Kafka per-message flush, topic and broker forms. The
	// durability study (docs/methodology.md) calls it "Async"; the sync-delay experiment shows the ack waits
	// for it (docs/methodology.md).
	kafkaTopicFlushPerMessage  = []string{"flush.messages", "1", "flush.ms", "0"}
	kafkaBrokerFlushPerMessage = []string{"log.flush.interval.messages", "1", "log.flush.interval.ms", "0"}

	pulsarBookieSync = kv(
		"journalWriteData", "true",
		"journalSyncData", "true",
		"journalMaxGroupWaitMSec", "1",
	)
	pulsarBookieBypass = kv(
		"journalWriteData", "false",
		"journalSyncData", "false",
	)
)

func pulsarBookieJournalAsync(flushMs string) map[string]string {
	return kv(
		"journalWriteData", "true",
		"journalSyncData", "false",
		"journalMaxGroupWaitMSec", "1",
		"journalPageCacheFlushIntervalMSec", flushMs,
	)
}

func pulsarBroker(ensemble, write, ack string) map[string]string {
	return kv(
		"managedLedgerDefaultEnsembleSize", ensemble,
		"managedLedgerDefaultWriteQuorum", write,
		"managedLedgerDefaultAckQuorum", ack,
		"managedLedgerNewEntriesCheckDelayInMillis", "0",
		"bookkeeperNumberOfChannelsPerBookie", "64",
	)
}

// Whole expected results, reused by the table rows that describe the same
// configuration. Each is written out field by field.
var (
	kafkaLevel1 = v1.EffectiveDurability{
		RequestedLevel: 1, AchievedLevel: 1,
		Replication: v1.ReplicationSync, Local: v1.LocalSync,
		Kafka: &v1.KafkaDurability{
			ReplicationFactor: 3,
			Topic:             kafkaTopic("2", kafkaTopicFlushPerMessage...),
			Broker:            kafkaBroker("3", "2", kafkaBrokerFlushPerMessage...),
			Producer:          kafkaProducerSync,
		},
	}
	kafkaLevel2 = v1.EffectiveDurability{
		RequestedLevel: 2, AchievedLevel: 2,
		Replication: v1.ReplicationSync, Local: v1.LocalAsync,
		Kafka: &v1.KafkaDurability{
			ReplicationFactor: 3,
			Topic:             kafkaTopic("2"),
			Broker:            kafkaBroker("3", "2"),
			Producer:          kafkaProducerSync,
		},
	}
	kafkaLevel3 = v1.EffectiveDurability{
		RequestedLevel: 3, AchievedLevel: 3,
		Replication: v1.ReplicationAsync, Local: v1.LocalSync,
		Kafka: &v1.KafkaDurability{
			ReplicationFactor: 3,
			Topic:             kafkaTopic("2", kafkaTopicFlushPerMessage...),
			Broker:            kafkaBroker("3", "2", kafkaBrokerFlushPerMessage...),
			Producer:          kafkaProducerAsync,
		},
	}
	kafkaLevel4 = v1.EffectiveDurability{
		RequestedLevel: 4, AchievedLevel: 4,
		Replication: v1.ReplicationAsync, Local: v1.LocalAsync,
		Kafka: &v1.KafkaDurability{
			ReplicationFactor: 3,
			Topic:             kafkaTopic("2"),
			Broker:            kafkaBroker("3", "2"),
			Producer:          kafkaProducerAsync,
		},
	}

	pulsarLevel1 = v1.EffectiveDurability{
		RequestedLevel: 1, AchievedLevel: 1,
		Replication: v1.ReplicationSync, Local: v1.LocalSync, Journal: v1.JournalWrite,
		Pulsar: &v1.PulsarDurability{
			EnsembleSize: 3, WriteQuorum: 3, AckQuorum: 2,
			Bookie: pulsarBookieSync,
			Broker: pulsarBroker("3", "3", "2"),
		},
	}
	pulsarLevel2 = v1.EffectiveDurability{
		RequestedLevel: 2, AchievedLevel: 2,
		Replication: v1.ReplicationSync, Local: v1.LocalAsync, Journal: v1.JournalWrite,
		Pulsar: &v1.PulsarDurability{
			EnsembleSize: 3, WriteQuorum: 3, AckQuorum: 2,
			Bookie: pulsarBookieJournalAsync("1000"),
			Broker: pulsarBroker("3", "3", "2"),
		},
	}
	pulsarLevel3 = v1.EffectiveDurability{
		RequestedLevel: 3, AchievedLevel: 3,
		Replication: v1.ReplicationAsync, Local: v1.LocalSync, Journal: v1.JournalWrite,
		Pulsar: &v1.PulsarDurability{
			EnsembleSize: 3, WriteQuorum: 3, AckQuorum: 1,
			Bookie: pulsarBookieSync,
			Broker: pulsarBroker("3", "3", "1"),
		},
	}
	pulsarLevel4 = v1.EffectiveDurability{
		RequestedLevel: 4, AchievedLevel: 4,
		Replication: v1.ReplicationAsync, Local: v1.LocalAsync, Journal: v1.JournalWrite,
		Pulsar: &v1.PulsarDurability{
			EnsembleSize: 3, WriteQuorum: 3, AckQuorum: 1,
			Bookie: pulsarBookieJournalAsync("1000"),
			Broker: pulsarBroker("3", "3", "1"),
		},
	}
	pulsarLevel2Bypass = v1.EffectiveDurability{
		RequestedLevel: 2, AchievedLevel: 2,
		Replication: v1.ReplicationSync, Local: v1.LocalAsync, Journal: v1.JournalBypass,
		Pulsar: &v1.PulsarDurability{
			EnsembleSize: 3, WriteQuorum: 3, AckQuorum: 2,
			Bookie: pulsarBookieBypass,
			Broker: pulsarBroker("3", "3", "2"),
		},
	}
	pulsarLevel4Bypass = v1.EffectiveDurability{
		RequestedLevel: 4, AchievedLevel: 4,
		Replication: v1.ReplicationAsync, Local: v1.LocalAsync, Journal: v1.JournalBypass,
		Pulsar: &v1.PulsarDurability{
			EnsembleSize: 3, WriteQuorum: 3, AckQuorum: 1,
			Bookie: pulsarBookieBypass,
			Broker: pulsarBroker("3", "3", "1"),
		},
	}
)

func TestTranslate(t *testing.T) {
	const (
		sync   = v1.ReplicationSync
		async  = v1.ReplicationAsync
		lSync  = v1.LocalSync
		lAsync = v1.LocalAsync
		write  = v1.JournalWrite
		bypass = v1.JournalBypass
	)
	cases := []struct {
		name   string
		system v1.System
		spec   v1.DurabilitySpec
		want   v1.EffectiveDurability
	}{
		// Every level, both systems.
		{"level 1 Kafka (per-message flush, sync local)", v1.SystemKafka, level(1), kafkaLevel1},
		{"level 2 Kafka", v1.SystemKafka, level(2), kafkaLevel2},
		{"level 3 Kafka (per-message flush, sync local)", v1.SystemKafka, level(3), kafkaLevel3},
		{"level 4 Kafka", v1.SystemKafka, level(4), kafkaLevel4},
		{"level 1 Pulsar", v1.SystemPulsar, level(1), pulsarLevel1},
		{"level 2 Pulsar", v1.SystemPulsar, level(2), pulsarLevel2},
		{"level 3 Pulsar", v1.SystemPulsar, level(3), pulsarLevel3},
		{"level 4 Pulsar", v1.SystemPulsar, level(4), pulsarLevel4},

		// Table 1-7: Pulsar configuration settings per mode.
		{"Table 1-7 Pulsar Replication ackQuorumSize = 1 (Async)", v1.SystemPulsar,
			explicit(rep(async, 3, 2), loc(lSync, "")), pulsarLevel3},
		{"Table 1-7 Pulsar Replication ackQuorumSize >= writeQuorumSize/2+1 (Sync)", v1.SystemPulsar,
			explicit(rep(sync, 3, 2), loc(lSync, "")), pulsarLevel1},
		{"Table 1-7 Pulsar Local journalWriteData=true journalSyncData=true (Sync, default)", v1.SystemPulsar,
			explicit(rep(sync, 3, 2), loc(lSync, write)), pulsarLevel1},
		{"Table 1-7 Pulsar Local journalWriteData=true journalSyncData=false (Async)", v1.SystemPulsar,
			explicit(rep(sync, 3, 2), loc(lAsync, write)), pulsarLevel2},
		{"Table 1-7 Pulsar Local journalWriteData=false journalSyncData=false (Async)", v1.SystemPulsar,
			explicit(rep(sync, 3, 2), loc(lAsync, bypass)), pulsarLevel2Bypass},

		// Table 1-8: Pulsar durability levels, row by row.
		{"Table 1-8 Pulsar Level 1 (sync ackQuorum, journal sync)", v1.SystemPulsar,
			explicit(rep(sync, 0, 0), loc(lSync, "")), pulsarLevel1},
		{"Table 1-8 Pulsar Level 3 (ackQuorum 1, journal sync)", v1.SystemPulsar,
			explicit(rep(async, 0, 0), loc(lSync, "")), pulsarLevel3},
		{"Table 1-8 Pulsar Level 2 (sync ackQuorum, journal write no sync)", v1.SystemPulsar,
			explicit(rep(sync, 0, 0), loc(lAsync, "")), pulsarLevel2},
		{"Table 1-8 Pulsar Level 4 (ackQuorum 1, journal write no sync)", v1.SystemPulsar,
			explicit(rep(async, 0, 0), loc(lAsync, "")), pulsarLevel4},
		{"Table 1-8 Pulsar Level 2 (sync ackQuorum, no journal)", v1.SystemPulsar,
			explicit(rep(sync, 0, 0), loc(lAsync, bypass)), pulsarLevel2Bypass},
		{"Table 1-8 Pulsar Level 4 (ackQuorum 1, no journal)", v1.SystemPulsar,
			explicit(rep(async, 0, 0), loc(lAsync, bypass)), pulsarLevel4Bypass},

		// Table 1-10: Kafka configuration settings per mode.
		{"Table 1-10 Kafka Replication acks = 1 (Async)", v1.SystemKafka,
			explicit(rep(async, 3, 2), loc(lAsync, "")), kafkaLevel4},
		{"Table 1-10 Kafka Replication acks = all (Sync)", v1.SystemKafka,
			explicit(rep(sync, 3, 2), loc(lAsync, "")), kafkaLevel2},
		{"Table 1-10 Kafka Local default fsync settings (Async)", v1.SystemKafka,
			explicit(rep(sync, 3, 2), loc(lAsync, write)), kafkaLevel2},
		{"Table 1-10 Kafka Local flush.messages=1 flush.ms=0 (still Async)", v1.SystemKafka,
			explicit(rep(sync, 3, 2), loc(lSync, write)), kafkaLevel1},

		// Table 1-11: Kafka durability levels, row by row.
		{"Table 1-11 Kafka Level 2 (acks=all, default fsync)", v1.SystemKafka, level(2), kafkaLevel2},
		{"Table 1-11 Kafka Level 4 (acks=1, default fsync)", v1.SystemKafka, level(4), kafkaLevel4},
		{"Table 1-11 Kafka Level 2 (acks=all, flush.messages=1 flush.ms=0)", v1.SystemKafka, level(1), kafkaLevel1},
		{"Table 1-11 Kafka Level 4 (acks=1, flush.messages=1 flush.ms=0)", v1.SystemKafka, level(3), kafkaLevel3},

		// Table 1-12: replication durability setup.
		{"Table 1-12 Pulsar Sync (ensemble 3, write quorum 3, ack quorum 2)", v1.SystemPulsar, level(2), pulsarLevel2},
		{"Table 1-12 Pulsar Async (ensemble 3, write quorum 3, ack quorum 1)", v1.SystemPulsar, level(4), pulsarLevel4},
		{"Table 1-12 Kafka Sync (replicas 3, acks=all, min.insync.replicas=2)", v1.SystemKafka, level(2), kafkaLevel2},
		{"Table 1-12 Kafka Async (replicas 3, acks=1, min.insync.replicas=2)", v1.SystemKafka, level(4), kafkaLevel4},

		// Table 1-13: local durability setup.
		{"Table 1-13 Kafka Async (flush.messages=1 flush.ms=0)", v1.SystemKafka,
			explicit(rep(sync, 3, 2), loc(lSync, "")), kafkaLevel1},
		{"Table 1-13 Kafka Async (default flush)", v1.SystemKafka,
			explicit(rep(sync, 3, 2), loc(lAsync, "")), kafkaLevel2},
		{"Table 1-13 Pulsar Sync (default)", v1.SystemPulsar,
			explicit(rep(sync, 3, 2), loc(lSync, "")), pulsarLevel1},
		{"Table 1-13 Pulsar Async (write to journal)", v1.SystemPulsar,
			explicit(rep(sync, 3, 2), loc(lAsync, write)), pulsarLevel2},
		{"Table 1-13 Pulsar Async (write to journal, journalPageCacheFlushIntervalMSec=1000 given)", v1.SystemPulsar,
			explicit(rep(sync, 3, 2), locFlush(lAsync, write, 1000)), pulsarLevel2},
		{"Table 1-13 Pulsar Async (bypass journaling)", v1.SystemPulsar,
			explicit(rep(sync, 3, 2), loc(lAsync, bypass)), pulsarLevel2Bypass},

		// Explicit settings beyond the study.
		{"explicit Kafka replicas 5 ackReplicas 3 Sync", v1.SystemKafka,
			explicit(rep(sync, 5, 3), loc(lAsync, "")),
			v1.EffectiveDurability{
				RequestedLevel: 2, AchievedLevel: 2,
				Replication: sync, Local: lAsync,
				Kafka: &v1.KafkaDurability{
					ReplicationFactor: 5,
					Topic:             kafkaTopic("3"),
					Broker:            kafkaBroker("5", "3"),
					Producer:          kafkaProducerSync,
				},
			}},
		{"explicit Pulsar replicas 5 ackReplicas 3 Sync", v1.SystemPulsar,
			explicit(rep(sync, 5, 3), loc(lAsync, "")),
			v1.EffectiveDurability{
				RequestedLevel: 2, AchievedLevel: 2,
				Replication: sync, Local: lAsync, Journal: write,
				Pulsar: &v1.PulsarDurability{
					EnsembleSize: 5, WriteQuorum: 5, AckQuorum: 3,
					Bookie: pulsarBookieJournalAsync("1000"),
					Broker: pulsarBroker("5", "5", "3"),
				},
			}},
		{"explicit Kafka replicas 5 ackReplicas 3 Sync, local Sync", v1.SystemKafka,
			explicit(rep(sync, 5, 3), loc(lSync, "")),
			v1.EffectiveDurability{
				RequestedLevel: 1, AchievedLevel: 1,
				Replication: sync, Local: lSync,
				Kafka: &v1.KafkaDurability{
					ReplicationFactor: 5,
					Topic:             kafkaTopic("3", kafkaTopicFlushPerMessage...),
					Broker:            kafkaBroker("5", "3", kafkaBrokerFlushPerMessage...),
					Producer:          kafkaProducerSync,
				},
			}},
		{"explicit Pulsar replicas 5 ackReplicas 1 Async keeps ack quorum 1", v1.SystemPulsar,
			explicit(rep(async, 5, 1), loc(lSync, "")),
			v1.EffectiveDurability{
				RequestedLevel: 3, AchievedLevel: 3,
				Replication: async, Local: lSync, Journal: write,
				Pulsar: &v1.PulsarDurability{
					EnsembleSize: 5, WriteQuorum: 5, AckQuorum: 1,
					Bookie: pulsarBookieSync,
					Broker: pulsarBroker("5", "5", "1"),
				},
			}},
		{"explicit Pulsar Async replication ignores ackReplicas 3 for the ack quorum", v1.SystemPulsar,
			explicit(rep(async, 3, 3), loc(lAsync, "")),
			pulsarLevel4},
		{"explicit Kafka Async replication keeps min.insync.replicas = ackReplicas 3", v1.SystemKafka,
			explicit(rep(async, 3, 3), loc(lAsync, "")),
			v1.EffectiveDurability{
				RequestedLevel: 4, AchievedLevel: 4,
				Replication: async, Local: lAsync,
				Kafka: &v1.KafkaDurability{
					ReplicationFactor: 3,
					Topic:             kafkaTopic("3"),
					Broker:            kafkaBroker("3", "3"),
					Producer:          kafkaProducerAsync,
				},
			}},
		{"explicit single replica Sync (1 of 1 is a majority)", v1.SystemKafka,
			explicit(rep(sync, 1, 1), loc(lAsync, "")),
			v1.EffectiveDurability{
				RequestedLevel: 2, AchievedLevel: 2,
				Replication: sync, Local: lAsync,
				Kafka: &v1.KafkaDurability{
					ReplicationFactor: 1,
					Topic:             kafkaTopic("1"),
					Broker:            kafkaBroker("1", "1"),
					Producer:          kafkaProducerSync,
				},
			}},
		{"explicit Pulsar flushIntervalMs 200 sets journalPageCacheFlushIntervalMSec", v1.SystemPulsar,
			explicit(rep(sync, 0, 0), locFlush(lAsync, "", 200)),
			v1.EffectiveDurability{
				RequestedLevel: 2, AchievedLevel: 2,
				Replication: sync, Local: lAsync, Journal: write,
				Pulsar: &v1.PulsarDurability{
					EnsembleSize: 3, WriteQuorum: 3, AckQuorum: 2,
					Bookie: pulsarBookieJournalAsync("200"),
					Broker: pulsarBroker("3", "3", "2"),
				},
			}},
		{"explicit Kafka flushIntervalMs 200 sets flush.ms and the flusher's interval", v1.SystemKafka,
			explicit(rep(async, 0, 0), locFlush(lAsync, "", 200)),
			v1.EffectiveDurability{
				RequestedLevel: 4, AchievedLevel: 4,
				Replication: async, Local: lAsync,
				Kafka: &v1.KafkaDurability{
					ReplicationFactor: 3,
					Topic:             kafkaTopic("2", "flush.ms", "200"),
					Broker: kafkaBroker("3", "2",
						"log.flush.interval.ms", "200",
						"log.flush.scheduler.interval.ms", "200"),
					Producer: kafkaProducerAsync,
				},
			}},
		{"explicit Kafka journal Bypass means nothing to Kafka", v1.SystemKafka,
			explicit(rep(sync, 3, 2), loc(lAsync, bypass)), kafkaLevel2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Translate(tc.system, tc.spec)
			if err != nil {
				t.Fatalf("Translate(%s) returned error: %v", tc.system, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Translate(%s) mismatch\n got: %s\nwant: %s", tc.system, show(got), show(tc.want))
			}
		})
	}
}

// show prints an EffectiveDurability with its pointed-to settings, so a
// failing comparison says which key differs.
func show(e v1.EffectiveDurability) string {
	var b strings.Builder
	k, p := e.Kafka, e.Pulsar
	e.Kafka, e.Pulsar = nil, nil
	b.WriteString(strings.TrimSpace(fmt.Sprintf("%+v", e)))
	if k != nil {
		b.WriteString(fmt.Sprintf(" kafka=%+v", *k))
	}
	if p != nil {
		b.WriteString(fmt.Sprintf(" pulsar=%+v", *p))
	}
	return b.String()
}

func TestTranslateErrors(t *testing.T) {
	const (
		sync   = v1.ReplicationSync
		async  = v1.ReplicationAsync
		lSync  = v1.LocalSync
		lAsync = v1.LocalAsync
		bypass = v1.JournalBypass
	)
	r3 := rep(sync, 3, 2)
	la := loc(lAsync, "")
	cases := []struct {
		name string
		spec v1.DurabilitySpec
		// want are substrings the message must contain: the field path
		// and the fix.
		want []string
	}{
		{"neither level nor explicit settings", v1.DurabilitySpec{},
			[]string{"spec.durability:", "set level (1-4), or both replication and local"}},
		{"level with replication", v1.DurabilitySpec{Level: level(2).Level, Replication: &r3},
			[]string{"spec.durability:", "not both", "remove level"}},
		{"level with local", v1.DurabilitySpec{Level: level(2).Level, Local: &la},
			[]string{"spec.durability:", "not both", "remove level"}},
		{"replication without local", v1.DurabilitySpec{Replication: &r3},
			[]string{"spec.durability.local is required", "add local.mode (Sync or Async)", "use level"}},
		{"local without replication", v1.DurabilitySpec{Local: &la},
			[]string{"spec.durability.replication is required", "add replication.mode (Sync or Async)", "use level"}},
		{"level 0", level(0), []string{"spec.durability.level (0) must be 1, 2, 3 or 4", "choose one"}},
		{"level 5", level(5), []string{"spec.durability.level (5) must be 1, 2, 3 or 4", "choose one"}},
		{"level -1", level(-1), []string{"spec.durability.level (-1) must be 1, 2, 3 or 4"}},
		{"replicas above 7", explicit(rep(sync, 8, 5), la),
			[]string{"spec.durability.replication.replicas (8) must be between 1 and 7", "remove it for the default 3"}},
		{"negative replicas", explicit(rep(async, -1, 1), la),
			[]string{"spec.durability.replication.replicas (-1) must be between 1 and 7"}},
		{"ackReplicas above 7", explicit(rep(async, 7, 9), la),
			[]string{"spec.durability.replication.ackReplicas (9) must be between 1 and 7", "remove it for the default 2"}},
		{"negative ackReplicas", explicit(rep(async, 3, -2), la),
			[]string{"spec.durability.replication.ackReplicas (-2) must be between 1 and 7"}},
		{"ackReplicas above replicas", explicit(rep(async, 2, 3), la),
			[]string{"spec.durability.replication.ackReplicas (3) must not exceed replicas (2); lower ackReplicas or raise replicas"}},
		{"default ackReplicas 2 above replicas 1", explicit(rep(async, 1, 0), la),
			[]string{"spec.durability.replication.ackReplicas (2) must not exceed replicas (1)"}},
		{"Sync without a majority (2 of 4)", explicit(rep(sync, 4, 2), la),
			[]string{"spec.durability.replication: mode Sync needs ackReplicas (2) to be a majority of replicas (4), at least 3", "raise ackReplicas or use mode Async"}},
		{"Sync with default ackReplicas 2 of 5", explicit(rep(sync, 5, 0), la),
			[]string{"mode Sync needs ackReplicas (2) to be a majority of replicas (5), at least 3"}},
		{"replication mode missing", explicit(rep("", 3, 2), la),
			[]string{"spec.durability.replication.mode is required", "set Sync or Async"}},
		{"replication mode lower case", explicit(rep("sync", 3, 2), la),
			[]string{`spec.durability.replication.mode "sync" is not a mode`, "set Sync or Async"}},
		{"local mode missing", explicit(r3, loc("", "")),
			[]string{"spec.durability.local.mode is required", "set Sync or Async"}},
		{"local mode unknown", explicit(r3, loc("Fsync", "")),
			[]string{`spec.durability.local.mode "Fsync" is not a mode`, "set Sync or Async"}},
		{"journal unknown", explicit(r3, loc(lAsync, "None")),
			[]string{`spec.durability.local.journal "None" is not a journal mode`, "set Write or Bypass"}},
		{"local Sync with journal Bypass", explicit(r3, loc(lSync, bypass)),
			[]string{"spec.durability.local: mode Sync needs the journal", "remove journal: Bypass or use mode Async"}},
		{"flushIntervalMs with local Sync", explicit(r3, locFlush(lSync, "", 1000)),
			[]string{"spec.durability.local.flushIntervalMs applies to mode Async only", "remove it or use mode Async"}},
		{"flushIntervalMs 0", explicit(r3, locFlush(lAsync, "", 0)),
			[]string{"spec.durability.local.flushIntervalMs (0) must be at least 1", "remove it"}},
		{"flushIntervalMs negative", explicit(r3, locFlush(lAsync, "", -5)),
			[]string{"spec.durability.local.flushIntervalMs (-5) must be at least 1"}},
		{"flushIntervalMs with journal Bypass", explicit(r3, locFlush(lAsync, bypass, 1000)),
			[]string{"spec.durability.local.flushIntervalMs applies to journal Write only", "remove flushIntervalMs or use journal Write"}},
		{"every problem reported at once", explicit(rep("", 2, 3), loc("", "None")),
			[]string{
				"spec.durability.replication.ackReplicas (3) must not exceed replicas (2)",
				"spec.durability.replication.mode is required",
				`spec.durability.local.journal "None"`,
				"spec.durability.local.mode is required",
			}},
	}
	for _, tc := range cases {
		// Validation does not depend on the system: the same spec must be
		// refused for both, so a comparison never runs half.
		for _, system := range []v1.System{v1.SystemKafka, v1.SystemPulsar} {
			t.Run(tc.name+" "+string(system), func(t *testing.T) {
				got, err := Translate(system, tc.spec)
				if err == nil {
					t.Fatalf("Translate(%s) = %s, want an error", system, show(got))
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				if !reflect.DeepEqual(got, v1.EffectiveDurability{}) {
					t.Errorf("on error Translate returned %s, want the zero value", show(got))
				}
			})
		}
	}
}

func TestTranslateUnknownSystem(t *testing.T) {
	_, err := Translate("rabbitmq", level(2))
	if err == nil || !strings.Contains(err.Error(), `spec.system "rabbitmq" is not supported; set kafka or pulsar`) {
		t.Fatalf("Translate(rabbitmq) error = %v, want one naming spec.system and the fix", err)
	}
}

// The controller merges spec.cluster.managed.brokerConfig into the returned
// maps; that must not leak into the next translation.
func TestTranslateReturnsFreshMaps(t *testing.T) {
	for _, system := range []v1.System{v1.SystemKafka, v1.SystemPulsar} {
		first, err := Translate(system, level(2))
		if err != nil {
			t.Fatal(err)
		}
		if first.Kafka != nil {
			first.Kafka.Broker["x"] = "y"
			first.Kafka.Topic["x"] = "y"
			first.Kafka.Producer["x"] = "y"
		} else {
			first.Pulsar.Broker["x"] = "y"
			first.Pulsar.Bookie["x"] = "y"
		}
		second, err := Translate(system, level(2))
		if err != nil {
			t.Fatal(err)
		}
		want := kafkaLevel2
		if system == v1.SystemPulsar {
			want = pulsarLevel2
		}
		if !reflect.DeepEqual(second, want) {
			t.Errorf("%s: second translation changed after mutating the first:\n got: %s", system, show(second))
		}
	}
}

func TestLevelOf(t *testing.T) {
	cases := []struct {
		r    v1.ReplicationMode
		l    v1.LocalMode
		want v1.Level
	}{
		{v1.ReplicationSync, v1.LocalSync, 1},
		{v1.ReplicationSync, v1.LocalAsync, 2},
		{v1.ReplicationAsync, v1.LocalSync, 3},
		{v1.ReplicationAsync, v1.LocalAsync, 4},
	}
	for _, tc := range cases {
		if got := LevelOf(tc.r, tc.l); got != tc.want {
			t.Errorf("LevelOf(%s, %s) = %d, want %d", tc.r, tc.l, got, tc.want)
		}
		r, l, ok := ModesOf(tc.want)
		if !ok || r != tc.r || l != tc.l {
			t.Errorf("ModesOf(%d) = %s, %s, %v; want %s, %s, true", tc.want, r, l, ok, tc.r, tc.l)
		}
	}
	for _, bad := range []v1.Level{0, 5, -1} {
		if r, l, ok := ModesOf(bad); ok || r != "" || l != "" {
			t.Errorf("ModesOf(%d) = %q, %q, %v; want empty and false", bad, r, l, ok)
		}
	}
}

func TestResolve(t *testing.T) {
	cases := []struct {
		name string
		spec v1.DurabilitySpec
		want Resolved
	}{
		{"level 1", level(1), Resolved{Level: 1, Replicas: 3, AckReplicas: 2,
			Replication: v1.ReplicationSync, Local: v1.LocalSync, Journal: v1.JournalWrite}},
		{"level 2", level(2), Resolved{Level: 2, Replicas: 3, AckReplicas: 2,
			Replication: v1.ReplicationSync, Local: v1.LocalAsync, Journal: v1.JournalWrite}},
		{"level 3", level(3), Resolved{Level: 3, Replicas: 3, AckReplicas: 2,
			Replication: v1.ReplicationAsync, Local: v1.LocalSync, Journal: v1.JournalWrite}},
		{"level 4", level(4), Resolved{Level: 4, Replicas: 3, AckReplicas: 2,
			Replication: v1.ReplicationAsync, Local: v1.LocalAsync, Journal: v1.JournalWrite}},
		{"explicit with every default", explicit(rep(v1.ReplicationSync, 0, 0), loc(v1.LocalAsync, "")),
			Resolved{Level: 2, Replicas: 3, AckReplicas: 2,
				Replication: v1.ReplicationSync, Local: v1.LocalAsync, Journal: v1.JournalWrite}},
		{"explicit with everything set", explicit(rep(v1.ReplicationAsync, 5, 3), v1.LocalDurability{
			Mode: v1.LocalAsync, Journal: v1.JournalWrite, FlushIntervalMs: i32(250)}),
			Resolved{Level: 4, Replicas: 5, AckReplicas: 3,
				Replication: v1.ReplicationAsync, Local: v1.LocalAsync, Journal: v1.JournalWrite, FlushIntervalMs: 250}},
		{"explicit bypass", explicit(rep(v1.ReplicationSync, 3, 2), loc(v1.LocalAsync, v1.JournalBypass)),
			Resolved{Level: 2, Replicas: 3, AckReplicas: 2,
				Replication: v1.ReplicationSync, Local: v1.LocalAsync, Journal: v1.JournalBypass}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Resolve(tc.spec)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if got != tc.want {
				t.Errorf("Resolve = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestTranslateFor(t *testing.T) {
	cases := []struct {
		name    string
		system  v1.System
		version string
		spec    v1.DurabilitySpec
		want    v1.Verification
		// explain are substrings status.durability.explanation must hold.
		explain []string
	}{
		{"Kafka 4.3.1 level 1 is verified, with its cost", v1.SystemKafka, "4.3.1", level(1), v1.Verified, []string{
			"Level 1 as configured, verified by the sync-delay experiment on Kafka 4.3.1",
			"hack/durability-experiment", "flush.messages=1", "a sync per append on every replica", "high watermark"}},
		{"Kafka 4.3.1 level 3 is verified, with its cost", v1.SystemKafka, "4.3.1", level(3), v1.Verified, []string{
			"Level 3 as configured, verified by the sync-delay experiment on Kafka 4.3.1", "a sync per append on every replica", "acks=1"}},
		{"Kafka 4.1.1 (the local cluster's Strimzi's) level 1 is verified", v1.SystemKafka, "4.1.1", level(1), v1.Verified, []string{
			"Level 1 as configured, verified by the sync-delay experiment on Kafka 4.1.1"}},
		{"Kafka 4.3.1 level 2 is verified async", v1.SystemKafka, "4.3.1", level(2), v1.Verified, []string{
			"Level 2 as configured, verified", "no acknowledgement waited for a sync"}},
		{"Kafka 3.9.0 level 1 is as configured, not verified", v1.SystemKafka, "3.9.0", level(1), v1.NotVerified, []string{
			"Level 1 as configured, not verified", "covers Kafka 4.1.1, 4.3.1 only", "does not cover Kafka 3.9.0",
			"rerun hack/durability-experiment", "a sync per append on every replica"}},
		{"Kafka of unknown version is not verified", v1.SystemKafka, "", level(4), v1.NotVerified, []string{
			"Level 4 as configured, not verified", "the broker version is not known"}},
		{"Pulsar 4.0.7 level 1 is verified", v1.SystemPulsar, "4.0.7", level(1), v1.Verified, []string{
			"Level 1 as configured, verified by the sync-delay experiment on Pulsar 4.0.7", "journalSyncData=true"}},
		{"Pulsar 4.0.7 journal bypass is verified async", v1.SystemPulsar, "4.0.7",
			explicit(rep(v1.ReplicationSync, 3, 2), loc(v1.LocalAsync, v1.JournalBypass)), v1.Verified, []string{
				"Level 2 as configured, verified", "journal bypassed"}},
		{"Pulsar 4.0.12 (the chart's) is not verified", v1.SystemPulsar, "4.0.12", level(1), v1.NotVerified, []string{
			"covers Pulsar 4.0.7 only", "does not cover Pulsar 4.0.12"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := TranslateFor(tc.system, tc.version, tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if got.Verification != tc.want || got.BrokerVersion != tc.version {
				t.Errorf("verification %q for version %q, want %q for %q", got.Verification, got.BrokerVersion, tc.want, tc.version)
			}
			if got.AchievedLevel != got.RequestedLevel {
				t.Errorf("achieved level %d, want the requested %d: every level is reached as configured", got.AchievedLevel, got.RequestedLevel)
			}
			for _, w := range tc.explain {
				if !strings.Contains(got.Explanation, w) {
					t.Errorf("explanation %q lacks %q", got.Explanation, w)
				}
			}
			// The settings are Translate's, whatever the version.
			plain, _ := Translate(tc.system, tc.spec)
			got.Explanation, got.Verification, got.BrokerVersion = "", "", ""
			if !reflect.DeepEqual(got, plain) {
				t.Errorf("TranslateFor changed the settings:\n got: %s\nwant: %s", show(got), show(plain))
			}
		})
	}
	if _, err := TranslateFor(v1.SystemKafka, "4.3.1", level(7)); err == nil {
		t.Error("TranslateFor accepted level 7")
	}
}

func TestVerificationLabel(t *testing.T) {
	verified, _ := TranslateFor(v1.SystemPulsar, "4.0.7", level(2))
	unverified, _ := TranslateFor(v1.SystemPulsar, "4.0.12", level(2))
	plain, _ := Translate(v1.SystemPulsar, level(2))
	// Kafka 4.1.1: the sync-delay experiment covers it, the replica-stall
	// one does not.
	strimzi, _ := TranslateFor(v1.SystemKafka, "4.1.1", level(2))
	// One replica: nothing to wait for but the leader.
	one, _ := TranslateFor(v1.SystemKafka, "4.3.1", level(2))
	one.Kafka.ReplicationFactor = 1
	for _, tc := range []struct {
		eff  *v1.EffectiveDurability
		want string
	}{
		{&verified, "verified for Pulsar 4.0.7 (where syncs fall; the replicas an ack waits for, at 3)"},
		{&strimzi, "verified for Kafka 4.1.1 (where syncs fall; the replicas an ack waits for as configured)"},
		{&one, "verified for Kafka 4.3.1 (where syncs fall)"},
		{&unverified, "as configured, not verified"},
		{&plain, "as configured, not verified"},
		{nil, "as configured, not verified"},
	} {
		if got := VerificationLabel(tc.eff); got != tc.want {
			t.Errorf("VerificationLabel = %q, want %q", got, tc.want)
		}
	}
}
