package durability

import (
	"strings"
	"testing"

	v1 "github.com/streambench/streambench-operator/api/v1alpha1"
)

// kafkaCluster is an observation of a 3-broker cluster whose brokers have
// broker (key=value pairs) and whose one benchmark topic has topic, each
// with a source.
func kafkaCluster(broker map[string]string, topic map[string]Setting) KafkaObservation {
	o := KafkaObservation{Brokers: map[int32]map[string]Setting{}, Topics: map[string]map[string]Setting{"t0": topic}, Replicas: map[string]int{"t0": 3}}
	for id := int32(1); id <= 3; id++ {
		o.Brokers[id] = map[string]Setting{}
		for k, v := range broker {
			o.Brokers[id][k] = Setting{Value: v, Source: "static broker config"}
		}
	}
	return o
}

func override(v string) Setting  { return Setting{Value: v, Source: "topic override"} }
func inherited(v string) Setting { return Setting{Value: v, Source: "static broker config"} }

func TestObserveKafka(t *testing.T) {
	asked := func(l v1.Level) v1.EffectiveDurability {
		eff, err := Translate(v1.SystemKafka, level(l))
		if err != nil {
			t.Fatal(err)
		}
		return eff
	}
	// What a run's topic gets when the cluster honours its overrides.
	topicAsAsked := func(l v1.Level) map[string]Setting {
		m := map[string]Setting{}
		for k, v := range asked(l).Kafka.Topic {
			m[k] = override(v)
		}
		if _, ok := m[KafkaTopicFlushMessages]; !ok {
			m[KafkaTopicFlushMessages] = Setting{Value: kafkaNever, Source: "default"}
		}
		return m
	}
	defaults := map[string]string{"min.insync.replicas": "1", "log.flush.interval.messages": kafkaNever}
	cases := []struct {
		name     string
		level    v1.Level
		obs      KafkaObservation
		achieved v1.Level
		local    v1.LocalMode
		explain  []string
	}{
		{"level 2 honoured; broker min.insync.replicas=1 reported as overridden", 2,
			kafkaCluster(defaults, topicAsAsked(2)), 2, v1.LocalAsync,
			[]string{"the brokers have min.insync.replicas=1; the benchmark topics override it with 2"}},
		{"level 1 honoured: flush.messages=1 on the topic", 1,
			kafkaCluster(defaults, topicAsAsked(1)), 1, v1.LocalSync, nil},
		{"a topic min.insync.replicas=1 makes acks=all async: level 2 asked, 4 in effect", 2,
			kafkaCluster(defaults, map[string]Setting{"min.insync.replicas": override("1"), "unclean.leader.election.enable": override("false"), "flush.messages": inherited(kafkaNever)}),
			4, v1.LocalAsync, []string{"topic t0 has min.insync.replicas=1 (topic override) with 3 replicas", "replication is async", "Level 4 is in effect, weaker than the requested level 2"}},
		{"unclean leader election makes acks=all async", 1,
			kafkaCluster(defaults, map[string]Setting{"min.insync.replicas": override("2"), "unclean.leader.election.enable": inherited("true"), "flush.messages": override("1")}),
			3, v1.LocalSync, []string{"unclean.leader.election.enable=true (static broker config)", "Level 3 is in effect, weaker"}},
		{"brokers that flush every message make level 2 a level 1", 2,
			kafkaCluster(map[string]string{"min.insync.replicas": "2", "log.flush.interval.messages": "1"},
				map[string]Setting{"min.insync.replicas": override("2"), "unclean.leader.election.enable": override("false"), "flush.messages": inherited("1")}),
			1, v1.LocalSync, []string{"topic t0 flushes every message (flush.messages=1, static broker config)", "Level 1 is in effect, stronger than the requested level 2"}},
		{"a topic that lost its flush override is async local", 3,
			kafkaCluster(defaults, map[string]Setting{"min.insync.replicas": override("2"), "flush.messages": inherited(kafkaNever)}),
			4, v1.LocalAsync, []string{"has flush.messages=" + kafkaNever + " (static broker config), not 1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ObserveKafka(asked(tc.level), tc.obs)
			if got.RequestedLevel != tc.level || got.AchievedLevel != tc.achieved || got.Local != tc.local {
				t.Errorf("requested %d achieved %d local %s; want %d, %d, %s\n%s", got.RequestedLevel, got.AchievedLevel, got.Local, tc.level, tc.achieved, tc.local, got.Explanation)
			}
			for _, w := range append(tc.explain, "Read from the existing cluster (DescribeConfigs", "not verified", "the broker version is not known") {
				if !strings.Contains(got.Explanation, w) {
					t.Errorf("explanation lacks %q:\n%s", w, got.Explanation)
				}
			}
			if got.Verification != v1.NotVerified {
				t.Errorf("verification %q for an unknown version", got.Verification)
			}
			// The broker map holds the values found, not the translation's.
			if v := got.Kafka.Broker["min.insync.replicas"]; v != tc.obs.Brokers[1]["min.insync.replicas"].Value {
				t.Errorf("broker min.insync.replicas = %q, want the value found %q", v, tc.obs.Brokers[1]["min.insync.replicas"].Value)
			}
			if got.Kafka.Producer["acks"] != asked(tc.level).Kafka.Producer["acks"] {
				t.Errorf("producer changed: %v", got.Kafka.Producer)
			}
		})
	}
	// The request is not modified.
	a := asked(2)
	_ = ObserveKafka(a, kafkaCluster(defaults, topicAsAsked(2)))
	if a.Kafka.Broker["min.insync.replicas"] != "2" {
		t.Errorf("ObserveKafka modified the request's maps: %v", a.Kafka.Broker)
	}
}

func TestObserveKafkaBrokersThatDisagree(t *testing.T) {
	o := kafkaCluster(map[string]string{"min.insync.replicas": "2"}, map[string]Setting{"min.insync.replicas": override("2"), "flush.messages": inherited(kafkaNever)})
	o.Brokers[3]["min.insync.replicas"] = Setting{Value: "1"}
	eff, _ := Translate(v1.SystemKafka, level(2))
	got := ObserveKafka(eff, o)
	if v := got.Kafka.Broker["min.insync.replicas"]; v != "1 (broker 3), 2 (brokers 1, 2)" {
		t.Errorf("broker min.insync.replicas = %q", v)
	}
}

func TestObserveKafkaFlushSchedulerNever(t *testing.T) {
	ms := int32(200)
	spec := explicit(rep(v1.ReplicationSync, 3, 2), v1.LocalDurability{Mode: v1.LocalAsync, FlushIntervalMs: &ms})
	eff, err := Translate(v1.SystemKafka, spec)
	if err != nil {
		t.Fatal(err)
	}
	o := kafkaCluster(map[string]string{"min.insync.replicas": "2", "log.flush.scheduler.interval.ms": kafkaNever},
		map[string]Setting{"min.insync.replicas": override("2"), "flush.ms": override("200"), "flush.messages": inherited(kafkaNever)})
	got := ObserveKafka(eff, o)
	if !strings.Contains(got.Explanation, "time-based flush never runs") || got.AchievedLevel != 2 {
		t.Errorf("level %d, explanation %q", got.AchievedLevel, got.Explanation)
	}
}

func TestObservePulsar(t *testing.T) {
	broker := map[string]string{
		"managedLedgerDefaultEnsembleSize": "2", "managedLedgerDefaultWriteQuorum": "2", "managedLedgerDefaultAckQuorum": "1",
		"managedLedgerNewEntriesCheckDelayInMillis": "10", "bookkeeperNumberOfChannelsPerBookie": "16",
	}
	cases := []struct {
		name     string
		level    v1.Level
		obs      PulsarObservation
		achieved v1.Level
		quorums  [3]int32
		explain  []string
	}{
		{"namespace policy as asked", 1, PulsarObservation{Version: "4.0.7", Persistence: &Quorums{3, 3, 2}, Broker: broker}, 1, [3]int32{3, 3, 2},
			[]string{"managedLedgerNewEntriesCheckDelayInMillis=10", "not verified: the bookies' journal settings"}},
		{"no namespace policy: the broker's 2/2/1 makes replication async", 2, PulsarObservation{Broker: broker}, 4, [3]int32{2, 2, 1},
			[]string{"no persistence policy", "ack quorum is 1 of a write quorum of 2", "Level 4 is in effect, weaker than the requested level 2"}},
		{"ack quorum above 1 on an async request", 4, PulsarObservation{Persistence: &Quorums{3, 3, 2}, Broker: broker}, 4, [3]int32{3, 3, 2},
			[]string{"every acknowledgement waits for 2 bookies"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			asked, err := Translate(v1.SystemPulsar, level(tc.level))
			if err != nil {
				t.Fatal(err)
			}
			got := ObservePulsar(asked, tc.obs)
			if got.AchievedLevel != tc.achieved {
				t.Errorf("achieved %d, want %d: %s", got.AchievedLevel, tc.achieved, got.Explanation)
			}
			if q := [3]int32{got.Pulsar.EnsembleSize, got.Pulsar.WriteQuorum, got.Pulsar.AckQuorum}; q != tc.quorums {
				t.Errorf("quorums %v, want %v", q, tc.quorums)
			}
			if got.Verification != v1.NotVerified || got.BrokerVersion != tc.obs.Version {
				t.Errorf("verification %q version %q: an existing Pulsar's bookies cannot be read, so never verified", got.Verification, got.BrokerVersion)
			}
			if got.Pulsar.Bookie != nil {
				t.Errorf("bookie settings %v reported, but streambench neither set nor read them", got.Pulsar.Bookie)
			}
			if got.Pulsar.Broker["bookkeeperNumberOfChannelsPerBookie"] != "16" {
				t.Errorf("broker settings %v, want the values found", got.Pulsar.Broker)
			}
			for _, w := range tc.explain {
				if !strings.Contains(got.Explanation, w) {
					t.Errorf("explanation lacks %q:\n%s", w, got.Explanation)
				}
			}
		})
	}
}
