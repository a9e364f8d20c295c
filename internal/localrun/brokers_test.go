package localrun

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/coordinator"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/stats"
)

func mustDecode(t *testing.T, y string) *v1alpha1.BenchmarkRun {
	t.Helper()
	run, err := decodeRun([]byte(y), ".", "")
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func translate(t *testing.T, run *v1alpha1.BenchmarkRun) v1alpha1.EffectiveDurability {
	t.Helper()
	eff, err := durability.Translate(run.Spec.System, run.Spec.DurabilityOrDefault())
	if err != nil {
		t.Fatal(err)
	}
	return eff
}

func TestKafkaOptions(t *testing.T) {
	run := mustDecode(t, head+`spec:
  system: kafka
  durability: {level: 1}
  cluster: {managed: {brokers: 4, brokerConfig: {num.io.threads: "8"}}}
  timeouts: {provisioning: 3m}
  workload: {messageSize: 32}
`)
	o := KafkaOptions(run, translate(t, run), "/data")
	if o.Brokers != 4 {
		t.Errorf("brokers %d, want 4 from the spec", o.Brokers)
	}
	want := map[string]string{
		"num.io.threads": "8", // brokerConfig
		// Level 1 on Kafka: the translation's nearest setting.
		"log.flush.interval.messages": "1", "min.insync.replicas": "2", "default.replication.factor": "3",
		"unclean.leader.election.enable": "false",
	}
	for k, v := range want {
		if o.BrokerConfig[k] != v {
			t.Errorf("BrokerConfig[%s] = %q, want %q (all: %v)", k, o.BrokerConfig[k], v, o.BrokerConfig)
		}
	}
	if o.Dir != filepath.Join("/data", "kafka") || o.ReadyTimeout != 3*time.Minute {
		t.Errorf("dir %q, ready timeout %s", o.Dir, o.ReadyTimeout)
	}
	if o := KafkaOptions(run, translate(t, run), ""); o.Dir != "" {
		t.Errorf("without --data-dir the brokers must use their own temporary directory, got %q", o.Dir)
	}
	if o.SeparateController {
		t.Error("a run without faults has a controller of its own")
	}
	run.Spec.Faults = []v1alpha1.Fault{{Action: v1alpha1.FaultKill, Target: "leader"}}
	if o := KafkaOptions(run, translate(t, run), ""); !o.SeparateController {
		t.Error("a run with faults has its controller on a broker: killing that broker would leave the cluster without one")
	}
}

func TestPulsarOptions(t *testing.T) {
	run := mustDecode(t, head+`spec:
  system: pulsar
  durability: {level: 2}
  cluster:
    managed:
      bookies: 4
      brokerConfig: {bookkeeperNumberOfChannelsPerBookie: "16"}
      bookieConfig: {numAddWorkerThreads: "2"}
  workload: {messageSize: 32}
`)
	eff := translate(t, run)
	o := PulsarOptions(run, eff, "")
	if o.Bookies != 4 {
		t.Errorf("bookies %d, want 4", o.Bookies)
	}
	// brokerConfig is applied over the translation's fairness fix.
	if o.BrokerConfig["bookkeeperNumberOfChannelsPerBookie"] != "16" {
		t.Errorf("brokerConfig not applied over the translation: %v", o.BrokerConfig)
	}
	for k, v := range eff.Pulsar.Broker {
		if k != "bookkeeperNumberOfChannelsPerBookie" && o.BrokerConfig[k] != v {
			t.Errorf("translation's broker key %s=%s lost: %v", k, v, o.BrokerConfig)
		}
	}
	for k, v := range eff.Pulsar.Bookie {
		if o.BookieConfig[k] != v {
			t.Errorf("translation's bookie key %s=%s lost: %v", k, v, o.BookieConfig)
		}
	}
	if o.BookieConfig["journalSyncData"] != "false" || o.BookieConfig["numAddWorkerThreads"] != "2" {
		t.Errorf("bookie config %v: want level 2's journalSyncData=false and the spec's numAddWorkerThreads", o.BookieConfig)
	}
	if o := PulsarOptions(mustDecode(t, head+"spec:\n  system: pulsar\n  cluster: {managed: {}}\n  workload: {messageSize: 32}\n"), eff, ""); o.Bookies != 3 {
		t.Errorf("default bookies %d, want 3", o.Bookies)
	}
}

func TestLocalNotes(t *testing.T) {
	cases := []struct {
		name, spec string
		want, not  []string
	}{
		{"kafka", "system: kafka\n  cluster: {managed: {version: 4.3.1}}", []string{"3 Kafka 4.3.1 brokers"}, []string{"was not used"}},
		{"kafka other version", "system: kafka\n  cluster: {managed: {version: 3.9.0}}", []string{"version 3.9.0 was not used"}, nil},
		{"pulsar asks for 3 brokers", "system: pulsar\n  cluster: {managed: {version: 4.0.12}}",
			[]string{"standalone", "asks for 3 Pulsar brokers", "single broker", "version 4.0.12 was not used"}, nil},
		{"pulsar with one broker", "system: pulsar\n  cluster: {managed: {brokers: 1}}", []string{"standalone"}, []string{"asks for"}},
		{"existing", "system: kafka\n  cluster: {existing: {bootstrapServers: 'h:1'}}", []string{"existing brokers"}, []string{"JVM"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			notes := strings.Join(LocalNotes(mustDecode(t, head+"spec:\n  "+c.spec+"\n  workload: {messageSize: 32}\n")), "\n")
			for _, w := range c.want {
				if !strings.Contains(notes, w) {
					t.Errorf("notes lack %q:\n%s", w, notes)
				}
			}
			for _, w := range c.not {
				if strings.Contains(notes, w) {
					t.Errorf("notes should not say %q:\n%s", w, notes)
				}
			}
		})
	}
}

func TestFormatProgress(t *testing.T) {
	p := coordinator.Progress{
		Phase: stats.PhaseMeasure, Elapsed: 75 * time.Second, Remaining: 45 * time.Second,
		PublishMsgPerSec: 2000, PublishMBPerSec: 2.048, ConsumeMsgPerSec: 1999, ConsumeMBPerSec: 2.047,
		PublishP99Ms: 3.25, EndToEndP99Ms: 5.5,
	}
	got := FormatProgress(p)
	for _, w := range []string{"[1:15]", "measure", "0:45 left", "2000 msg/s", "2.05 MB/s", "p99     3.25 ms", "1999 msg/s", "e2e p99     5.50 ms"} {
		if !strings.Contains(got, w) {
			t.Errorf("%q lacks %q", got, w)
		}
	}
	p.Remaining, p.Phase = -1, stats.PhaseRateSearch
	if got := FormatProgress(p); !strings.Contains(got, "? left") || !strings.Contains(got, "rate-search") {
		t.Errorf("unknown remaining time: %q", got)
	}
}

func TestDescribeDurability(t *testing.T) {
	l1, l2 := v1alpha1.Level1, v1alpha1.Level2
	k1, err := durability.TranslateFor(v1alpha1.SystemKafka, localbrokers.DefaultKafkaVersion, v1alpha1.DurabilitySpec{Level: &l1})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := DescribeDurability(k1), "level 1 (sync replication, sync local), verified for Kafka 4.3.1 (where syncs fall; the replicas an ack waits for, at 3)"; got != want {
		t.Errorf("Kafka level 1: %q, want %q", got, want)
	}
	p2, err := durability.TranslateFor(v1alpha1.SystemPulsar, "", v1alpha1.DurabilitySpec{Level: &l2})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := DescribeDurability(p2), "level 2 (sync replication, async local, journal write), as configured, not verified"; got != want {
		t.Errorf("Pulsar level 2 of an unknown version: %q, want %q", got, want)
	}
	// A level lower than asked (an existing cluster's settings) says why.
	p2.RequestedLevel, p2.Explanation = l1, "min.insync.replicas=1 on the brokers"
	if got := DescribeDurability(p2); !strings.Contains(got, "DOWNGRADED from the requested level 1: min.insync.replicas=1") {
		t.Errorf("downgraded: %q", got)
	}
}
