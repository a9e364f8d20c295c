package durability

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// Setting is one configuration value read from a cluster, with where it
// comes from (e.g. "topic override", "static broker config", "default"):
// a value the run's topic sets itself and one a broker default happens to
// give are not the same finding.
type Setting struct {
	Value  string
	Source string
}

// KafkaObservation is what was read from an existing Kafka cluster after the
// run created its topics: DescribeConfigs of every broker and of every
// benchmark topic, and the topics' replica counts from the metadata.
type KafkaObservation struct {
	// Version is the brokers' Kafka version when known; the Kafka protocol
	// does not tell it, so it is usually empty.
	Version string
	// Brokers holds each broker's durability keys, by broker id.
	Brokers map[int32]map[string]Setting
	// Topics holds each benchmark topic's durability keys as in effect
	// (its override, or the broker value it inherits).
	Topics map[string]map[string]Setting
	// Replicas is each topic's smallest replica count over its partitions.
	Replicas map[string]int
}

// PulsarObservation is what was read from an existing Pulsar cluster through
// its admin REST API after the run created its namespace.
type PulsarObservation struct {
	// Version is what /admin/v2/brokers/version answered.
	Version string
	// Persistence is the run namespace's persistence policy as read back;
	// nil when it has none (the broker defaults then apply).
	Persistence *Quorums
	// Broker holds the durability keys of the broker's runtime
	// configuration (/admin/v2/brokers/configuration/runtime).
	Broker map[string]string
}

// Quorums are a Pulsar persistence policy: ensemble, write and ack quorum.
type Quorums struct{ Ensemble, Write, Ack int32 }

// kafkaBrokerKeys are the broker keys reported for an existing cluster.
var kafkaBrokerKeys = []string{
	KafkaBrokerMinInsyncReplicas, KafkaBrokerDefaultReplicationFactor, KafkaBrokerUncleanElection,
	KafkaBrokerFlushIntervalMessages, KafkaBrokerFlushIntervalMs, KafkaBrokerFlushSchedulerIntervalMs,
}

// KafkaBrokerKeys are the broker configuration keys an observation reads.
func KafkaBrokerKeys() []string { return slices.Clone(kafkaBrokerKeys) }

// KafkaTopicKeys are the topic configuration keys an observation reads.
func KafkaTopicKeys() []string {
	return []string{KafkaTopicMinInsyncReplicas, KafkaTopicUncleanElection, KafkaTopicFlushMessages, KafkaTopicFlushMs}
}

// PulsarBrokerKeys are the broker configuration keys an observation reads.
func PulsarBrokerKeys() []string {
	return []string{PulsarBrokerEnsembleSize, PulsarBrokerWriteQuorum, PulsarBrokerAckQuorum,
		PulsarBrokerNewEntriesCheckDelayMillis, PulsarBrokerChannelsPerBookie}
}

// kafkaNever is Long.MAX_VALUE, Kafka's "never" for its flush intervals.
const kafkaNever = "9223372036854775807"

// ObserveKafka is the durability really in effect on an existing Kafka
// cluster, given what the run asked (asked, from Translate) and what was
// read. The settings maps become the values found; the level is what the
// weakest benchmark topic gives with the run's producer; the explanation
// lists every finding that differs from the translation. Pure.
func ObserveKafka(asked v1alpha1.EffectiveDurability, o KafkaObservation) v1alpha1.EffectiveDurability {
	eff := asked
	k := *asked.Kafka
	eff.Kafka = &k
	var findings []string
	note := func(format string, args ...any) { findings = append(findings, fmt.Sprintf(format, args...)) }

	k.Broker = map[string]string{}
	for _, key := range kafkaBrokerKeys {
		if v := brokerValues(o.Brokers, key); v != "" {
			k.Broker[key] = v
		}
	}

	topics := slices.Sorted(maps.Keys(o.Topics))
	if len(topics) == 0 {
		note("no benchmark topic could be read, so the topic settings are as requested, not as found")
	}
	// Each topic gives a level with the run's producer; the weakest topic
	// is the run's level, and its settings are the ones reported.
	repl, local := asked.Replication, asked.Local
	weakest := v1alpha1.Level(0)
	var overridden []string
	brokerISR := k.Broker[KafkaBrokerMinInsyncReplicas]
	for _, t := range topics {
		cfg, rf := o.Topics[t], o.Replicas[t]
		isr, _ := strconv.Atoi(cfg[KafkaTopicMinInsyncReplicas].Value)
		tRepl := asked.Replication
		if asked.Replication == v1alpha1.ReplicationSync {
			switch {
			case isr*2 <= rf:
				note("topic %s has min.insync.replicas=%d (%s) with %d replicas: acks=all is answered by fewer than a majority when followers fall behind, so replication is async",
					t, isr, cfg[KafkaTopicMinInsyncReplicas].Source, rf)
				tRepl = v1alpha1.ReplicationAsync
			case cfg[KafkaTopicUncleanElection].Value == "true":
				note("topic %s has unclean.leader.election.enable=true (%s): an out-of-sync replica can become leader and drop acknowledged writes, so replication is async",
					t, cfg[KafkaTopicUncleanElection].Source)
				tRepl = v1alpha1.ReplicationAsync
			}
		}
		if rf < int(asked.Kafka.ReplicationFactor) {
			note("topic %s has %d replicas, not the requested %d", t, rf, asked.Kafka.ReplicationFactor)
		}
		if s := cfg[KafkaTopicMinInsyncReplicas]; s.Source == "topic override" && brokerISR != "" && s.Value != brokerISR {
			overridden = append(overridden, t)
		}
		// flush.messages=1 puts a sync before every ack (docs/methodology.md).
		tLocal := v1alpha1.LocalAsync
		if cfg[KafkaTopicFlushMessages].Value == "1" {
			tLocal = v1alpha1.LocalSync
			if asked.Local != v1alpha1.LocalSync {
				note("topic %s flushes every message (flush.messages=1, %s): every acknowledgement waits for a sync, which the run did not ask for",
					t, cfg[KafkaTopicFlushMessages].Source)
			}
		} else if asked.Local == v1alpha1.LocalSync {
			note("topic %s has flush.messages=%s (%s), not 1: acknowledgements do not wait for a sync, so local durability is async",
				t, cfg[KafkaTopicFlushMessages].Value, cfg[KafkaTopicFlushMessages].Source)
		}
		if l := LevelOf(tRepl, tLocal); l > weakest {
			weakest, repl, local = l, tRepl, tLocal
			k.Topic = map[string]string{}
			for _, key := range KafkaTopicKeys() {
				if s, ok := cfg[key]; ok {
					k.Topic[key] = s.Value
				}
			}
			k.ReplicationFactor = int32(rf)
		}
	}
	// Broker values the topics override are reported, so a reader of
	// status.durability does not take them for what the run got.
	switch {
	case len(overridden) == 0:
	case len(overridden) == len(topics):
		note("the brokers have min.insync.replicas=%s; the benchmark topics override it with %s", brokerISR, o.Topics[overridden[0]][KafkaTopicMinInsyncReplicas].Value)
	default:
		note("the brokers have min.insync.replicas=%s; topic(s) %s override it", brokerISR, strings.Join(overridden, ", "))
	}
	if _, ok := asked.Kafka.Topic[KafkaTopicFlushMs]; ok && asked.Local == v1alpha1.LocalAsync {
		if v := k.Broker[KafkaBrokerFlushSchedulerIntervalMs]; strings.Contains(v, kafkaNever) {
			note("the topics set flush.ms=%s, but the brokers' log.flush.scheduler.interval.ms is %s (never), so the time-based flush never runs and the page cache is flushed by the OS",
				asked.Kafka.Topic[KafkaTopicFlushMs], v)
		}
	}

	eff.Replication, eff.Local = repl, local
	eff.AchievedLevel = LevelOf(repl, local)
	Establish(&eff, v1alpha1.SystemKafka, o.Version)
	eff.Explanation = observedExplanation(eff, "DescribeConfigs of the brokers and the benchmark topics", findings)
	return eff
}

// ObservePulsar is the durability really in effect on an existing Pulsar
// cluster. The namespace policy and the broker configuration are read; the
// bookies' journal settings cannot be read through Pulsar's admin API, so
// the local durability stays as requested and the level is never marked
// verified. Pure.
func ObservePulsar(asked v1alpha1.EffectiveDurability, o PulsarObservation) v1alpha1.EffectiveDurability {
	eff := asked
	p := *asked.Pulsar
	eff.Pulsar = &p
	var findings []string
	note := func(format string, args ...any) { findings = append(findings, fmt.Sprintf(format, args...)) }

	p.Broker = map[string]string{}
	for _, key := range PulsarBrokerKeys() {
		if v, ok := o.Broker[key]; ok {
			p.Broker[key] = v
		}
	}
	q := o.Persistence
	if q == nil {
		note("the run's namespace has no persistence policy, so the brokers' managedLedgerDefault* quorums apply")
		q = &Quorums{Ensemble: atoi32(o.Broker[PulsarBrokerEnsembleSize]), Write: atoi32(o.Broker[PulsarBrokerWriteQuorum]), Ack: atoi32(o.Broker[PulsarBrokerAckQuorum])}
	}
	p.EnsembleSize, p.WriteQuorum, p.AckQuorum = q.Ensemble, q.Write, q.Ack
	repl := asked.Replication
	if asked.Replication == v1alpha1.ReplicationSync && q.Ack*2 <= q.Write {
		note("the ack quorum is %d of a write quorum of %d, not a majority, so replication is async", q.Ack, q.Write)
		repl = v1alpha1.ReplicationAsync
	}
	if asked.Replication == v1alpha1.ReplicationAsync && q.Ack > 1 {
		note("the ack quorum is %d, so every acknowledgement waits for %d bookies, which the run did not ask for", q.Ack, q.Ack)
	}
	if v := o.Broker[PulsarBrokerNewEntriesCheckDelayMillis]; v != "" && v != "0" {
		note("the broker has managedLedgerNewEntriesCheckDelayInMillis=%s, not 0: caught-up consumers wait up to that long for new entries (a fairness fix of docs/methodology.md is missing)", v)
	}
	// streambench cannot set or read an existing cluster's bookies.
	p.Bookie = nil

	eff.Replication = repl
	eff.AchievedLevel = LevelOf(repl, asked.Local)
	eff.BrokerVersion = o.Version
	eff.Verification = v1alpha1.NotVerified
	eff.Explanation = observedExplanation(eff, "the namespace's persistence policy and the broker's runtime configuration (admin API)", findings) +
		fmt.Sprintf(" Local durability (%s) is as requested, not verified: the bookies' journal settings (journalWriteData, journalSyncData) cannot be read through Pulsar's admin API; check them on the bookies.",
			strings.ToLower(string(asked.Local)))
	return eff
}

// observedExplanation leads with what was read and found, then says how
// the level in effect compares with the request.
func observedExplanation(eff v1alpha1.EffectiveDurability, read string, findings []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Read from the existing cluster (%s)", read)
	if len(findings) == 0 {
		b.WriteString(": the settings give the requested level.")
	} else {
		b.WriteString(": " + strings.Join(findings, "; ") + ".")
	}
	switch {
	case eff.AchievedLevel > eff.RequestedLevel:
		fmt.Fprintf(&b, " Level %d is in effect, weaker than the requested level %d.", eff.AchievedLevel, eff.RequestedLevel)
	case eff.AchievedLevel < eff.RequestedLevel:
		fmt.Fprintf(&b, " Level %d is in effect, stronger than the requested level %d (and slower).", eff.AchievedLevel, eff.RequestedLevel)
	}
	if eff.Explanation != "" {
		b.WriteString(" " + eff.Explanation)
	}
	return b.String()
}

// brokerValues is one key over every broker: the value when all agree,
// otherwise each value with its brokers ("1 (broker 1), 2 (brokers 2, 3)").
func brokerValues(brokers map[int32]map[string]Setting, key string) string {
	by := map[string][]int32{}
	for id, cfg := range brokers {
		if s, ok := cfg[key]; ok {
			by[s.Value] = append(by[s.Value], id)
		}
	}
	if len(by) <= 1 {
		for v := range by {
			return v
		}
		return ""
	}
	vals := slices.Sorted(maps.Keys(by))
	parts := make([]string, len(vals))
	for i, v := range vals {
		ids := by[v]
		sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
		s := make([]string, len(ids))
		for j, id := range ids {
			s[j] = strconv.Itoa(int(id))
		}
		word := "broker"
		if len(ids) > 1 {
			word = "brokers"
		}
		parts[i] = fmt.Sprintf("%s (%s %s)", v, word, strings.Join(s, ", "))
	}
	return strings.Join(parts, ", ")
}

func atoi32(s string) int32 {
	n, _ := strconv.Atoi(s)
	return int32(n)
}
