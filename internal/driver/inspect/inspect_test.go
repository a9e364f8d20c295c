package inspect

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/results"
)

func translate(t *testing.T, sys v1alpha1.System, l v1alpha1.Level) v1alpha1.EffectiveDurability {
	t.Helper()
	eff, err := durability.Translate(sys, v1alpha1.DurabilitySpec{Level: &l})
	if err != nil {
		t.Fatal(err)
	}
	return eff
}

// TestKafkaExistingCluster reads a real 3-broker Kafka whose brokers were
// started with min.insync.replicas=1 and log.flush.interval.messages=1, the
// kind of cluster a run in existing mode meets and streambench did not
// configure. A topic created as a level-2 run creates it keeps its own
// min.insync.replicas=2 but inherits the per-message flush, so level 1 is in
// effect; a topic without the min.insync.replicas override (a cluster that
// drops it) is acknowledged by its leader alone, so replication is async.
func TestKafkaExistingCluster(t *testing.T) {
	ctx := context.Background()
	k, err := localbrokers.StartKafka(ctx, localbrokers.KafkaOptions{
		BrokerConfig: map[string]string{"min.insync.replicas": "1", "log.flush.interval.messages": "1", "default.replication.factor": "3"},
		Log:          t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := k.Stop(); err != nil {
			t.Errorf("stopping Kafka: %v", err)
		}
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(k.Bootstrap(), ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	asked := translate(t, v1alpha1.SystemKafka, v1alpha1.Level2)
	create := func(name string, cfg map[string]string) {
		t.Helper()
		c := map[string]*string{}
		for k, v := range cfg {
			c[k] = &v
		}
		resp, err := adm.CreateTopic(ctx, 1, 3, c, name)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			t.Fatalf("creating %s: %v", name, err)
		}
	}
	create("as-asked", asked.Kafka.Topic)
	create("no-isr-override", map[string]string{"unclean.leader.election.enable": "false"})

	t.Run("read back", func(t *testing.T) {
		o, err := Kafka(ctx, k.Bootstrap(), nil, []string{"as-asked", "no-isr-override"})
		if err != nil {
			t.Fatal(err)
		}
		if len(o.Brokers) != 3 {
			t.Fatalf("read %d brokers, want 3", len(o.Brokers))
		}
		// KRaft keeps min.insync.replicas of server.properties as the
		// cluster-wide default in its metadata (ELR, KIP-966), so Kafka 4
		// reports it as that, not as a static broker config.
		for id, cfg := range o.Brokers {
			if s := cfg["min.insync.replicas"]; s.Value != "1" || s.Source == "" || s.Source == "topic override" {
				t.Errorf("broker %d min.insync.replicas = %+v, want 1 from a broker-level source", id, s)
			}
			if s := cfg["log.flush.interval.messages"]; s.Value != "1" || s.Source != "static broker config" {
				t.Errorf("broker %d log.flush.interval.messages = %+v, want 1 from the static broker config", id, s)
			}
		}
		if s := o.Topics["as-asked"]["min.insync.replicas"]; s.Value != "2" || s.Source != "topic override" {
			t.Errorf("as-asked min.insync.replicas = %+v, want the topic override 2", s)
		}
		if s := o.Topics["as-asked"]["flush.messages"]; s.Value != "1" || s.Source != "static broker config" {
			t.Errorf("as-asked flush.messages = %+v, want 1 inherited from the brokers", s)
		}
		if o.Replicas["as-asked"] != 3 {
			t.Errorf("replicas %v, want 3", o.Replicas)
		}
	})
	t.Run("level 2 asked, the brokers' per-message flush gives level 1", func(t *testing.T) {
		got, err := Existing(ctx, v1alpha1.SystemKafka, v1alpha1.BrokerEndpoints{BootstrapServers: k.Bootstrap()}, nil, asked, []string{"as-asked"})
		if err != nil {
			t.Fatal(err)
		}
		if got.AchievedLevel != v1alpha1.Level1 || got.Local != v1alpha1.LocalSync {
			t.Errorf("achieved %d local %s, want level 1 with sync local: %s", got.AchievedLevel, got.Local, got.Explanation)
		}
		for _, w := range []string{"the brokers have min.insync.replicas=1; the benchmark topics override it with 2", "flushes every message", "stronger than the requested level 2", "not verified"} {
			if !strings.Contains(got.Explanation, w) {
				t.Errorf("explanation lacks %q:\n%s", w, got.Explanation)
			}
		}
		if got.Kafka.Broker["min.insync.replicas"] != "1" || got.Kafka.Broker["log.flush.interval.messages"] != "1" {
			t.Errorf("broker settings %v, want the values found", got.Kafka.Broker)
		}
	})
	t.Run("a topic without the min.insync.replicas override is async replication", func(t *testing.T) {
		got, err := Existing(ctx, v1alpha1.SystemKafka, v1alpha1.BrokerEndpoints{BootstrapServers: k.Bootstrap()}, nil, asked, []string{"as-asked", "no-isr-override"})
		if err != nil {
			t.Fatal(err)
		}
		if got.Replication != v1alpha1.ReplicationAsync || got.AchievedLevel != v1alpha1.Level3 {
			t.Errorf("replication %s, level %d; want async replication, level 3: %s", got.Replication, got.AchievedLevel, got.Explanation)
		}
		if !strings.Contains(got.Explanation, "topic no-isr-override has min.insync.replicas=1 (dynamic cluster-wide broker default) with 3 replicas") ||
			!strings.Contains(got.Explanation, "topic(s) as-asked override it") {
			t.Errorf("explanation does not name the topic and where its value comes from:\n%s", got.Explanation)
		}
	})
	t.Run("a topic that does not exist is an error naming it", func(t *testing.T) {
		if _, err := Kafka(ctx, k.Bootstrap(), nil, []string{"missing-topic"}); err == nil || !strings.Contains(err.Error(), "missing-topic") {
			t.Errorf("error %v, want one naming missing-topic", err)
		}
	})
	t.Run("the failure settings are the brokers' own, ELR from the finalized features", func(t *testing.T) {
		fs, err := Failure(ctx, v1alpha1.SystemKafka, v1alpha1.BrokerEndpoints{BootstrapServers: k.Bootstrap()}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range fs {
			names = append(names, s.Name+"="+s.Value)
		}
		// Kafka 4.3.1's defaults, and ELR on for a new cluster (Kafka 4.1+).
		want := []string{"broker.session.timeout.ms=9000", "replica.lag.time.max.ms=30000", "unclean.leader.election.enable=false", "eligible.leader.replicas.version=1 (on)"}
		if !slices.Equal(names, want) {
			t.Errorf("failure settings %v, want %v", names, want)
		}
		if s := fs[0]; s.Seconds == nil || *s.Seconds != 9 || fs[2].Seconds != nil {
			t.Errorf("broker.session.timeout.ms %+v as 9 s, unclean.leader.election.enable %+v as no length: want both", s, fs[2])
		}
	})
}

// TestPulsarExistingCluster reads a real Pulsar standalone (3 bookies): the
// persistence policy set on a namespace, the broker's runtime configuration
// and its version. The bookies' journal cannot be read from outside, so the
// level is never marked verified.
func TestPulsarExistingCluster(t *testing.T) {
	ctx := context.Background()
	p, err := localbrokers.StartPulsar(ctx, localbrokers.PulsarOptions{Log: t.Logf, JVM: localbrokers.PulsarTestJVM,
		BrokerConfig: map[string]string{"bookkeeperClientTimeoutInSeconds": "12"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Errorf("stopping Pulsar: %v", err)
		}
	})
	admin := func(method, path, body string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, method, p.AdminURL()+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("%s %s: %s", method, path, resp.Status)
		}
	}
	admin(http.MethodPut, "/admin/v2/namespaces/public/ack1", "")
	admin(http.MethodPost, "/admin/v2/namespaces/public/ack1/persistence", `{"bookkeeperEnsemble":3,"bookkeeperWriteQuorum":3,"bookkeeperAckQuorum":1}`)
	admin(http.MethodPut, "/admin/v2/namespaces/public/nopolicy", "")

	asked := translate(t, v1alpha1.SystemPulsar, v1alpha1.Level1)
	got, err := Existing(ctx, v1alpha1.SystemPulsar, v1alpha1.BrokerEndpoints{AdminURL: p.AdminURL()}, nil, asked, []string{"persistent://public/ack1/topic-0"})
	if err != nil {
		t.Fatal(err)
	}
	if got.BrokerVersion != localbrokers.DefaultPulsarVersion {
		t.Errorf("version %q, want %s", got.BrokerVersion, localbrokers.DefaultPulsarVersion)
	}
	if q := [3]int32{got.Pulsar.EnsembleSize, got.Pulsar.WriteQuorum, got.Pulsar.AckQuorum}; q != [3]int32{3, 3, 1} {
		t.Errorf("quorums %v, want the namespace's 3/3/1", q)
	}
	if got.AchievedLevel != v1alpha1.Level3 || got.Verification != v1alpha1.NotVerified {
		t.Errorf("level %d %s, want 3 (ack quorum 1 is async replication), not verified: %s", got.AchievedLevel, got.Verification, got.Explanation)
	}
	for _, w := range []string{"ack quorum is 1 of a write quorum of 3", "journal settings", "cannot be read"} {
		if !strings.Contains(got.Explanation, w) {
			t.Errorf("explanation lacks %q:\n%s", w, got.Explanation)
		}
	}
	// localbrokers' standalone defaults to 3/3/2 for namespaces without a policy.
	got, err = Existing(ctx, v1alpha1.SystemPulsar, v1alpha1.BrokerEndpoints{AdminURL: p.AdminURL()}, nil, asked, []string{"persistent://public/nopolicy/topic-0"})
	if err != nil {
		t.Fatal(err)
	}
	if got.AchievedLevel != v1alpha1.Level1 || !strings.Contains(got.Explanation, "no persistence policy") || got.Pulsar.Broker["managedLedgerDefaultAckQuorum"] != "2" {
		t.Errorf("namespace without a policy: level %d, broker %v: %s", got.AchievedLevel, got.Pulsar.Broker, got.Explanation)
	}
	// The settings a stall is weighed against, as the broker runs them:
	// the BookKeeper timeout set above, in seconds; the quorums, not
	// lengths of time.
	fs, err := Failure(ctx, v1alpha1.SystemPulsar, v1alpha1.BrokerEndpoints{AdminURL: p.AdminURL()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	read := map[string]results.BrokerSetting{}
	for _, s := range fs {
		read[s.Name] = s
	}
	if s := read["bookkeeperClientTimeoutInSeconds"]; s.Value != "12" || s.Seconds == nil || *s.Seconds != 12 {
		t.Errorf("bookkeeperClientTimeoutInSeconds %+v, want 12 s as set", s)
	}
	if s := read["managedLedgerDefaultEnsembleSize"]; s.Value != "3" || s.Seconds != nil {
		t.Errorf("managedLedgerDefaultEnsembleSize %+v, want 3 and no length of time", s)
	}
	if s, ok := read["metadataStoreSessionTimeoutMillis"]; !ok || s.Seconds == nil || *s.Seconds <= 0 {
		t.Errorf("metadataStoreSessionTimeoutMillis %+v, %v: want it read, in seconds", s, ok)
	}
}

func TestNamespaceOf(t *testing.T) {
	for in, want := range map[string]string{
		"persistent://public/sb-x/topic-0": "public/sb-x",
		"public/sb-x/topic-0":              "public/sb-x",
	} {
		if got, err := NamespaceOf(in); err != nil || got != want {
			t.Errorf("NamespaceOf(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := NamespaceOf("topic-0"); err == nil {
		t.Error("NamespaceOf(topic-0) accepted a name without tenant and namespace")
	}
}
