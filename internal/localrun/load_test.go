package localrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// TestLoadRunSamples loads every sample users apply: each must pass local
// mode's decoding and validation, with the CRD's defaults in place.
func TestLoadRunSamples(t *testing.T) {
	files, err := filepath.Glob("../../config/samples/run-*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples found: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			run, err := LoadRun(f)
			if err != nil {
				t.Fatalf("sample does not load: %v", err)
			}
			s := run.Spec
			if run.Name == "" || s.Durability == nil || s.Workers.Count < 1 || s.Teardown.Policy == "" ||
				s.Timeouts.Provisioning == nil || s.Workload.TestDurationMinutes == nil || s.Workload.SubscriptionsPerTopic == nil {
				t.Errorf("defaults missing: %+v", s)
			}
			if m := s.Cluster.Managed; m != nil && (m.Brokers < 1 || m.Storage.DeleteClaim == nil) {
				t.Errorf("managed defaults missing: %+v", m)
			}
		})
	}
}

// TestLoadRunDefaults checks the CRD defaults on a minimal run.
func TestLoadRunDefaults(t *testing.T) {
	run, err := decodeRun([]byte(`
apiVersion: streambench.io/v1alpha1
kind: BenchmarkRun
metadata: {generateName: quick-}
spec:
  system: kafka
  cluster: {managed: {}}
  workload: {messageSize: 1024, producerRate: 100}
`), ".", "")
	if err != nil {
		t.Fatal(err)
	}
	s := run.Spec
	if !strings.HasPrefix(run.Name, "quick-") || len(run.Name) != len("quick-")+5 {
		t.Errorf("generateName gave name %q", run.Name)
	}
	if s.Durability == nil || s.Durability.Level == nil || *s.Durability.Level != v1alpha1.Level2 {
		t.Errorf("durability %+v, want the CRD default level 2", s.Durability)
	}
	if s.Cluster.Managed.Brokers != 3 || !*s.Cluster.Managed.Storage.DeleteClaim {
		t.Errorf("managed %+v, want 3 brokers and deleteClaim true", s.Cluster.Managed)
	}
	if s.Workers.Count != 2 || s.Teardown.Policy != v1alpha1.TeardownAlways || s.Timeouts.Provisioning.Duration != 20*time.Minute {
		t.Errorf("workers %d, teardown %q, provisioning %v; want 2, Always, 20m", s.Workers.Count, s.Teardown.Policy, s.Timeouts.Provisioning)
	}
	w := s.Workload
	if w.Topics != 1 || w.PartitionsPerTopic != 1 || *w.SubscriptionsPerTopic != 1 || *w.TestDurationMinutes != 5 ||
		*w.WarmupDurationMinutes != 1 || w.KeyDistributor != v1alpha1.KeyNone {
		t.Errorf("workload defaults missing: %+v", w)
	}

	// Explicit replication settings get their own defaults.
	run, err = decodeRun([]byte(`
apiVersion: streambench.io/v1alpha1
kind: BenchmarkRun
metadata: {name: explicit}
spec:
  system: pulsar
  durability: {replication: {mode: Sync}, local: {mode: Async}}
  cluster: {managed: {brokers: 1}}
  workload: {messageSize: 100}
`), ".", "")
	if err != nil {
		t.Fatal(err)
	}
	d := run.Spec.Durability
	if d.Replication.Replicas != 3 || d.Replication.AckReplicas != 2 || d.Local.Journal != v1alpha1.JournalWrite {
		t.Errorf("explicit durability defaults: %+v %+v", d.Replication, d.Local)
	}
}

const head = "apiVersion: streambench.io/v1alpha1\nkind: BenchmarkRun\nmetadata: {name: bad}\n"

// TestLoadRunRejects: every bad input fails, and the error names the field
// (and, where there is one, the fix).
func TestLoadRunRejects(t *testing.T) {
	kafka := func(extra string) string {
		return head + "spec:\n  system: kafka\n  cluster: {managed: {brokers: 3}}\n  workload: {messageSize: 1024}\n" + extra
	}
	cases := []struct {
		name string
		yaml string
		want []string // substrings of the error
	}{
		{"misspelt spec field", head + "spec:\n  system: kafka\n  cluster: {managed: {brokerz: 3}}\n  workload: {messageSize: 1}\n",
			[]string{`spec.cluster.managed.brokerz`, `did you mean "brokers"`}},
		{"misspelt top-level field", head + "specs: {}\n", []string{`specs`, `did you mean "spec"`}},
		{"unknown deep field lists the known ones", kafka("  teardown: {when: Always}\n"),
			[]string{`spec.teardown.when`, "known fields", "policy"}},
		{"case matters", head + "spec:\n  System: kafka\n", []string{`spec.System`, `did you mean "system"`}},
		{"wrong apiVersion", strings.Replace(kafka(""), "v1alpha1", "v1", 1), []string{"apiVersion", "streambench.io/v1alpha1"}},
		{"wrong kind", strings.Replace(kafka(""), "BenchmarkRun", "BenchmarkSuite", 1), []string{"kind", "BenchmarkRun"}},
		{"no name", strings.Replace(kafka(""), "{name: bad}", "{}", 1), []string{"metadata.name", "generateName"}},
		{"name too long", strings.Replace(kafka(""), "name: bad", "name: "+strings.Repeat("a", 41), 1), []string{"metadata.name", "40"}},
		{"name not DNS", strings.Replace(kafka(""), "name: bad", "name: Bad_Name", 1), []string{"metadata.name", "lower case"}},
		{"no system", head + "spec:\n  cluster: {managed: {}}\n  workload: {messageSize: 1}\n", []string{"spec.system", "kafka"}},
		{"unknown system", head + "spec:\n  system: rabbitmq\n  cluster: {managed: {}}\n  workload: {messageSize: 1}\n", []string{"spec.system", `"rabbitmq"`}},
		{"explicit zero brokers", strings.Replace(kafka(""), "brokers: 3", "brokers: 0", 1), []string{"spec.cluster.managed.brokers must be at least 1", "remove it for the default (3)"}},
		{"negative brokers", strings.Replace(kafka(""), "brokers: 3", "brokers: -1", 1), []string{"spec.cluster.managed.brokers", "at least 1"}},
		{"brokers not a number", strings.Replace(kafka(""), "brokers: 3", "brokers: three", 1), []string{"spec.cluster.managed.brokers must be of type integer"}},
		{"unquoted number in brokerConfig", strings.Replace(kafka(""), "brokers: 3", "brokers: 3, brokerConfig: {num.io.threads: 8}", 1),
			[]string{"spec.cluster.managed.brokerConfig", "quote it"}},
		{"explicit zero workers", kafka("  workers: {count: 0}\n"), []string{"spec.workers.count must be at least 1", "remove it for the default (2)"}},
		{"empty teardown policy", kafka("  teardown: {policy: \"\"}\n"), []string{"spec.teardown.policy", `Unsupported value: ""`, "remove it for the default (Always)"}},
		{"bad teardown policy", kafka("  teardown: {policy: Sometimes}\n"), []string{"spec.teardown.policy", "OnSuccess"}},
		{"managed and existing", head + "spec:\n  system: kafka\n  cluster: {managed: {}, existing: {bootstrapServers: 'h:9092'}}\n  workload: {messageSize: 1}\n",
			[]string{"spec.cluster", "exactly one of managed"}},
		{"neither managed nor existing", head + "spec:\n  system: kafka\n  cluster: {}\n  workload: {messageSize: 1}\n",
			[]string{"spec.cluster", "exactly one of managed"}},
		{"kafka brokers below replicas", strings.Replace(kafka(""), "brokers: 3", "brokers: 2", 1),
			[]string{"spec.cluster.managed.brokers", "replication factor", "add brokers or lower replicas"}},
		{"kafka brokers below explicit replicas", strings.Replace(kafka("  durability: {replication: {replicas: 5, ackReplicas: 3, mode: Sync}, local: {mode: Async}}\n"), "brokers: 3", "brokers: 4", 1),
			[]string{"spec.cluster.managed.brokers", "replication factor"}},
		{"pulsar bookies below replicas", head + "spec:\n  system: pulsar\n  cluster: {managed: {bookies: 2}}\n  workload: {messageSize: 1}\n",
			[]string{"spec.cluster.managed.bookies", "ensemble size"}},
		{"spec.payload without payloadFile", kafka("  payload: {configMapRef: {name: omb-payload}}\n"),
			[]string{"spec.payload", "spec.workload.payloadFile, which is not set"}},
		{"bookies on kafka", strings.Replace(kafka(""), "brokers: 3", "brokers: 3, bookies: 3", 1), []string{"spec.cluster.managed", "pulsar only"}},
		{"durability key in brokerConfig", strings.Replace(kafka(""), "brokers: 3", "brokers: 3, brokerConfig: {min.insync.replicas: '1'}", 1),
			[]string{"spec.cluster.managed.brokerConfig must not set durability keys", "min.insync.replicas", "spec.durability"}},
		{"journal key in bookieConfig", head + "spec:\n  system: pulsar\n  cluster: {managed: {bookieConfig: {journalSyncData: 'false'}}}\n  workload: {messageSize: 1}\n",
			[]string{"spec.cluster.managed.bookieConfig must not set the journal keys", "journalSyncData", "spec.durability"}},
		{"kafka existing with pulsar URLs", head + "spec:\n  system: kafka\n  cluster: {existing: {bootstrapServers: 'h:9092', serviceURL: 'pulsar://h:6650'}}\n  workload: {messageSize: 1}\n",
			[]string{"spec.cluster.existing", "pulsar only"}},
		{"kafka existing without address", head + "spec:\n  system: kafka\n  cluster: {existing: {}}\n  workload: {messageSize: 1}\n",
			[]string{"spec.cluster.existing", "bootstrapServers"}},
		{"secured managed brokers", strings.Replace(kafka(""), "brokers: 3", "brokers: 3, security: {tls: true, authentication: scram-sha-512}", 1),
			[]string{"spec.cluster.managed.security", "plaintext, anonymous listeners only", "--secure"}},
		{"mutual TLS without TLS", strings.Replace(kafka(""), "brokers: 3", "brokers: 3, security: {authentication: tls}", 1),
			[]string{"spec.cluster.managed.security", "authentication tls is mutual TLS: set tls: true"}},
		{"kafka existing strimzi cluster", head + "spec:\n  system: kafka\n  cluster: {existing: {strimziCluster: {name: my}}}\n  workload: {messageSize: 1024}\n",
			[]string{"spec.cluster.existing.strimziCluster", "local mode", "bootstrapServers"}},
		{"pulsar existing without adminURL", head + "spec:\n  system: pulsar\n  cluster: {existing: {serviceURL: 'pulsar://h:6650'}}\n  workload: {messageSize: 1}\n",
			[]string{"spec.cluster.existing", "adminURL"}},
		{"pulsar existing with a bad scheme", head + "spec:\n  system: pulsar\n  cluster: {existing: {serviceURL: 'http://h:6650', adminURL: 'http://h:8080'}}\n  workload: {messageSize: 1}\n",
			[]string{"spec.cluster.existing.serviceURL", "pulsar://"}},
		{"pulsar driver on kafka", kafka("  driver: {pulsar: {producer: {batchingMaxPublishDelayMs: '1'}}}\n"),
			[]string{"spec.driver.pulsar", "spec.driver.kafka"}},
		{"acks in the kafka driver", kafka("  driver: {kafka: {producer: {acks: '1'}}}\n"),
			[]string{"spec.driver.kafka.producer.acks", "durability"}},
		{"flush.ms in the kafka topic", kafka("  driver: {kafka: {topic: {flush.ms: '1'}}}\n"),
			[]string{"spec.driver.kafka.topic", "flush.ms", "durability"}},
		{"level out of range", kafka("  durability: {level: 5}\n"), []string{"spec.durability.level", "1, 2, 3 or 4"}},
		{"level and explicit", kafka("  durability: {level: 2, replication: {mode: Sync}, local: {mode: Async}}\n"),
			[]string{"spec.durability", "not both"}},
		{"ackReplicas above replicas", kafka("  durability: {replication: {replicas: 2, ackReplicas: 3, mode: Async}, local: {mode: Async}}\n"),
			[]string{"spec.durability.replication.ackReplicas must not exceed replicas"}},
		{"explicit zero replicas", kafka("  durability: {replication: {replicas: 0, mode: Sync}, local: {mode: Async}}\n"),
			[]string{"spec.durability.replication.replicas must be at least 1"}},
		{"no workload", head + "spec:\n  system: kafka\n  cluster: {managed: {}}\n", []string{"spec.workload", "--workload"}},
		{"workload explicit zero", strings.Replace(kafka(""), "{messageSize: 1024}", "{messageSize: 1024, topics: 0}", 1),
			[]string{"spec.workload.topics", "at least 1"}},
		{"workload misspelt field", strings.Replace(kafka(""), "{messageSize: 1024}", "{messageSize: 1024, producerRat: 10}", 1),
			[]string{"spec.workload", `did you mean "producerRate"`}},
		{"workload without messageSize", strings.Replace(kafka(""), "{messageSize: 1024}", "{topics: 1}", 1),
			[]string{"spec.workload.messageSize", "e.g. 1024"}},
		{"workload payload file missing", strings.Replace(kafka(""), "{messageSize: 1024}", "{messageSize: 1024, payloadFile: nope.bin}", 1),
			[]string{"spec.workload.payloadFile"}},
		{"a fault after the measured phase", kafka("  faults: [{action: Kill, target: broker-0, at: 10m}]\n"),
			[]string{"spec.faults[0].at", "testDurationMinutes"}},
		{"a fault on a pod locally", kafka("  faults: [{action: DeletePod, target: broker-0, at: 1m}]\n"),
			[]string{"spec.faults[0].action", "processes, not pods"}},
		// A bookie is a JVM of its own in a run with faults; the broker is
		// not.
		{"a fault on the Pulsar standalone", head + "spec:\n  system: pulsar\n  cluster: {managed: {}}\n  workload: {messageSize: 1024}\n  faults: [{action: Pause, target: broker-0, at: 1m, duration: 5s}]\n",
			[]string{"spec.faults", "one standalone JVM", "target a bookie"}},
		{"two documents", kafka("") + "---\n" + kafka(""), []string{"2 YAML documents"}},
		{"duplicate key", kafka("  system: pulsar\n"), []string{`"system" already set`}},
		{"empty file", "# nothing\n", []string{"empty"}},
		{"not a mapping", "- a\n- b\n", []string{"one BenchmarkRun"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run, err := decodeRun([]byte(c.yaml), t.TempDir(), "")
			if err == nil {
				t.Fatalf("accepted: %+v", run.Spec)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestLoadRunReportsEveryProblem: one pass shows all problems, so a
// newcomer does not fix them one run at a time.
func TestLoadRunReportsEveryProblem(t *testing.T) {
	_, err := decodeRun([]byte(head+`spec:
  system: kafka
  cluster: {managed: {brokers: 2, brokerz: 1}}
  workers: {count: 0}
  workload: {messageSize: 1024, topics: 0}
`), ".", "")
	if err == nil {
		t.Fatal("accepted")
	}
	for _, w := range []string{"spec.cluster.managed.brokerz", "spec.workers.count", "spec.workload.topics", "spec.cluster.managed.brokers"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not mention %s:\n%v", w, err)
		}
	}
}

func TestLoadWorkloadOverride(t *testing.T) {
	dir := t.TempDir()
	runFile := filepath.Join(dir, "run.yaml")
	// No spec.workload at all: --workload provides it.
	if err := os.WriteFile(runFile, []byte(head+"spec:\n  system: kafka\n  cluster: {managed: {}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := Load(runFile, "testdata/short-latency.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if run.Spec.Workload.Name != "short-latency-local" || run.Spec.Workload.ProducerRate != 1000 {
		t.Errorf("workload not replaced: %+v", run.Spec.Workload)
	}
	if _, err := LoadRun(runFile); err == nil || !strings.Contains(err.Error(), "spec.workload") {
		t.Errorf("without --workload the missing spec.workload must be reported, got %v", err)
	}
	bad := filepath.Join(dir, "bad-workload.yaml")
	if err := os.WriteFile(bad, []byte("messageSize: 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(runFile, bad); err == nil || !strings.Contains(err.Error(), "bad-workload.yaml") || !strings.Contains(err.Error(), "messageSize") {
		t.Errorf("a bad --workload file must be named with its field, got %v", err)
	}
	// A spec.workload payloadFile is found next to the run file.
	if err := os.WriteFile(filepath.Join(dir, "payload.bin"), make([]byte, 64), 0o644); err != nil {
		t.Fatal(err)
	}
	withPayload := filepath.Join(dir, "payload-run.yaml")
	if err := os.WriteFile(withPayload, []byte(head+"spec:\n  system: kafka\n  cluster: {managed: {}}\n  workload: {messageSize: 64, payloadFile: payload.bin}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run, err = LoadRun(withPayload)
	if err != nil {
		t.Fatal(err)
	}
	if run.Spec.Workload.PayloadFile != filepath.Join(dir, "payload.bin") {
		t.Errorf("payloadFile %q, want it resolved next to the run file", run.Spec.Workload.PayloadFile)
	}
}
