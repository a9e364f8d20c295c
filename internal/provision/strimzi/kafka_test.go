package strimzi

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/localbrokers"
)

func TestKafka(t *testing.T) {
	tests := []struct {
		name string
		run  *v1alpha1.BenchmarkRun
		want string
	}{
		{
			name: "default managed cluster at level 2",
			run:  newRun(),
			want: `
apiVersion: kafka.strimzi.io/v1
kind: Kafka
metadata:
  name: run-a
  namespace: bench
  labels:
    app.kubernetes.io/managed-by: streambench
    streambench.io/run: run-a
spec:
  kafka:
    listeners:
    - {name: plain, port: 9092, type: internal, tls: false}
    config:
      offsets.topic.replication.factor: "3"
      transaction.state.log.replication.factor: "3"
      transaction.state.log.min.isr: "2"
      default.replication.factor: "3"
      min.insync.replicas: "2"
      unclean.leader.election.enable: "false"
    metricsConfig:
      type: jmxPrometheusExporter
      valueFrom:
        configMapKeyRef: {name: run-a-metrics, key: kafka-metrics-config.yml}
`,
		},
		{
			// Level 1 asks for per-message flush; brokerConfig is applied
			// over the translation (the API says so) and adds its own keys.
			name: "version and brokerConfig over level 1",
			run: newRun(func(r *v1alpha1.BenchmarkRun) {
				r.Spec.Durability.Level = ptr.To(v1alpha1.Level1)
				r.Spec.Cluster.Managed.Version = "4.3.1"
				r.Spec.Cluster.Managed.BrokerConfig = map[string]string{
					"log.flush.interval.ms": "5",
					"num.network.threads":   "8",
					// Strimzi's exceptions to its forbidden prefixes pass.
					"ssl.cipher.suites":                     "TLS_AES_128_GCM_SHA256",
					"controller.quorum.election.timeout.ms": "2000",
				}
			}),
			want: `
apiVersion: kafka.strimzi.io/v1
kind: Kafka
metadata:
  name: run-a
  namespace: bench
  labels:
    app.kubernetes.io/managed-by: streambench
    streambench.io/run: run-a
spec:
  kafka:
    version: 4.3.1
    listeners:
    - {name: plain, port: 9092, type: internal, tls: false}
    config:
      offsets.topic.replication.factor: "3"
      transaction.state.log.replication.factor: "3"
      transaction.state.log.min.isr: "2"
      default.replication.factor: "3"
      min.insync.replicas: "2"
      unclean.leader.election.enable: "false"
      log.flush.interval.messages: "1"
      log.flush.interval.ms: "5"
      num.network.threads: "8"
      ssl.cipher.suites: TLS_AES_128_GCM_SHA256
      controller.quorum.election.timeout.ms: "2000"
    metricsConfig:
      type: jmxPrometheusExporter
      valueFrom:
        configMapKeyRef: {name: run-a-metrics, key: kafka-metrics-config.yml}
`,
		},
		{
			// One broker cannot host internal topics with 3 replicas;
			// without sizing them consumer groups never get a coordinator.
			name: "single broker, explicit durability with one replica",
			run: newRun(func(r *v1alpha1.BenchmarkRun) {
				r.Name = "Solo.Run"
				r.Spec.Cluster.Managed.Brokers = 1
				r.Spec.Durability = &v1alpha1.DurabilitySpec{
					Replication: &v1alpha1.ReplicationDurability{Mode: v1alpha1.ReplicationAsync, Replicas: 1, AckReplicas: 1},
					Local:       &v1alpha1.LocalDurability{Mode: v1alpha1.LocalAsync, FlushIntervalMs: ptr.To(int32(1000))},
				}
			}),
			want: `
apiVersion: kafka.strimzi.io/v1
kind: Kafka
metadata:
  name: solo-run-8714a71a
  namespace: bench
  labels:
    app.kubernetes.io/managed-by: streambench
    streambench.io/run: Solo.Run
spec:
  kafka:
    listeners:
    - {name: plain, port: 9092, type: internal, tls: false}
    config:
      offsets.topic.replication.factor: "1"
      transaction.state.log.replication.factor: "1"
      transaction.state.log.min.isr: "1"
      default.replication.factor: "1"
      min.insync.replicas: "1"
      unclean.leader.election.enable: "false"
      log.flush.interval.ms: "1000"
      log.flush.scheduler.interval.ms: "1000"
    metricsConfig:
      type: jmxPrometheusExporter
      valueFrom:
        configMapKeyRef: {name: solo-run-8714a71a-metrics, key: kafka-metrics-config.yml}
`,
		},
		{
			// Brokers 0 is what a Go caller gets without the CRD default.
			name: "brokers unset means the CRD default of 3",
			run: newRun(func(r *v1alpha1.BenchmarkRun) {
				r.Spec.Cluster.Managed.Brokers = 0
				r.Spec.Durability.Level = ptr.To(v1alpha1.Level4)
			}),
			want: `
apiVersion: kafka.strimzi.io/v1
kind: Kafka
metadata:
  name: run-a
  namespace: bench
  labels:
    app.kubernetes.io/managed-by: streambench
    streambench.io/run: run-a
spec:
  kafka:
    listeners:
    - {name: plain, port: 9092, type: internal, tls: false}
    config:
      offsets.topic.replication.factor: "3"
      transaction.state.log.replication.factor: "3"
      transaction.state.log.min.isr: "2"
      default.replication.factor: "3"
      min.insync.replicas: "2"
      unclean.leader.election.enable: "false"
    metricsConfig:
      type: jmxPrometheusExporter
      valueFrom:
        configMapKeyRef: {name: run-a-metrics, key: kafka-metrics-config.yml}
`,
		},
		{
			// The clients authenticate: the listener asks for SCRAM over
			// TLS, and the entity operator runs the User Operator alone,
			// which turns the run's KafkaUser into credentials.
			name: "TLS and SCRAM-SHA-512",
			run:  newRun(withSecurity(true, v1alpha1.ManagedAuthScramSHA512)),
			want: securedKafka(`{name: tls, port: 9093, type: internal, tls: true, authentication: {type: scram-sha-512}}`, true),
		},
		{
			name: "mutual TLS",
			run:  newRun(withSecurity(true, v1alpha1.ManagedAuthTLS)),
			want: securedKafka(`{name: tls, port: 9093, type: internal, tls: true, authentication: {type: tls}}`, true),
		},
		{
			// Encryption alone: nobody to authenticate, no User Operator.
			name: "TLS without authentication",
			run:  newRun(withSecurity(true, "")),
			want: securedKafka(`{name: tls, port: 9093, type: internal, tls: true}`, false),
		},
		{
			// SASL_PLAINTEXT: the cost of SCRAM without the cost of TLS.
			name: "SCRAM-SHA-512 without TLS",
			run:  newRun(withSecurity(false, v1alpha1.ManagedAuthScramSHA512)),
			want: securedKafka(`{name: plain, port: 9092, type: internal, tls: false, authentication: {type: scram-sha-512}}`, true),
		},
		{
			// An empty security block is a plaintext run.
			name: "empty security",
			run:  newRun(withSecurity(false, "")),
			want: securedKafka(`{name: plain, port: 9092, type: internal, tls: false}`, false),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Kafka(tc.run, translate(t, tc.run))
			if err != nil {
				t.Fatalf("Kafka: %v", err)
			}
			assertObject(t, got, tc.want)
			assertClientSafe(t, got)
			if refs := got.GetOwnerReferences(); len(refs) != 0 {
				t.Errorf("owner references %v: the controller sets them, not the builder", refs)
			}
		})
	}
}

func TestKafkaErrors(t *testing.T) {
	level2 := func(t *testing.T, r *v1alpha1.BenchmarkRun) v1alpha1.EffectiveDurability {
		return translate(t, newRun())
	}
	tests := []struct {
		name string
		run  *v1alpha1.BenchmarkRun
		eff  func(*testing.T, *v1alpha1.BenchmarkRun) v1alpha1.EffectiveDurability
		want []string // every one must appear in the error
		not  []string // none may appear
	}{
		{
			name: "listeners is Strimzi's",
			run: newRun(func(r *v1alpha1.BenchmarkRun) {
				r.Spec.Cluster.Managed.BrokerConfig = map[string]string{"listeners": "PLAINTEXT://:9999", "num.io.threads": "16"}
			}),
			eff:  level2,
			want: []string{`spec.cluster.managed.brokerConfig["listeners"]`, `starting with "listeners"`, "remove it"},
			not:  []string{"num.io.threads"},
		},
		{
			// Strimzi lower-cases keys before matching; every bad key is
			// named, not just the first.
			name: "every forbidden key is named, case-insensitively",
			run: newRun(func(r *v1alpha1.BenchmarkRun) {
				r.Spec.Cluster.Managed.BrokerConfig = map[string]string{
					"SSL.keystore.location": "/x", "advertised.listeners": "x", "log.dirs": "/data",
					"node.id": "7", "process.roles": "broker", "controller.listener.names": "C",
					"broker.rack": "a", "listener.security.protocol.map": "x", "sasl.enabled.mechanisms": "PLAIN",
					"security.inter.broker.protocol": "SSL",
				}
			}),
			eff: level2,
			want: []string{
				`brokerConfig["SSL.keystore.location"]`, `brokerConfig["advertised.listeners"]`, `brokerConfig["log.dirs"]`,
				`brokerConfig["node.id"]`, `brokerConfig["process.roles"]`, `brokerConfig["controller.listener.names"]`,
				`brokerConfig["broker.rack"]`, `brokerConfig["listener.security.protocol.map"]`,
				`brokerConfig["sasl.enabled.mechanisms"]`, `brokerConfig["security.inter.broker.protocol"]`,
			},
		},
		{
			// The CRD's rule refuses it too; a Go caller gets the same fix.
			name: "mutual TLS without TLS",
			run:  newRun(withSecurity(false, v1alpha1.ManagedAuthTLS)),
			eff:  level2,
			want: []string{"spec.cluster.managed.security.authentication tls is mutual TLS", "tls: true"},
		},
		{
			name: "Pulsar's token",
			run:  newRun(withSecurity(true, v1alpha1.ManagedAuthToken)),
			eff:  level2,
			want: []string{`spec.cluster.managed.security.authentication "token" is not for Kafka`, "scram-sha-512", "tls"},
		},
		{
			name: "fewer brokers than the replication factor",
			run:  newRun(func(r *v1alpha1.BenchmarkRun) { r.Spec.Cluster.Managed.Brokers = 2 }),
			eff:  level2,
			want: []string{"spec.cluster.managed.brokers (2) must be at least the replication factor (3"},
		},
		{
			name: "negative brokers",
			run:  newRun(func(r *v1alpha1.BenchmarkRun) { r.Spec.Cluster.Managed.Brokers = -1 }),
			eff:  level2,
			want: []string{"spec.cluster.managed.brokers (-1) must be at least 1"},
		},
		{
			name: "existing cluster",
			run: newRun(func(r *v1alpha1.BenchmarkRun) {
				r.Spec.Cluster = v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{BootstrapServers: "k:9092"}}
			}),
			eff:  level2,
			want: []string{"spec.cluster.managed is not set"},
		},
		{
			name: "pulsar run",
			run:  newRun(func(r *v1alpha1.BenchmarkRun) { r.Spec.System = v1alpha1.SystemPulsar }),
			eff:  level2,
			want: []string{`spec.system is "pulsar"`},
		},
		{
			name: "durability translated for pulsar",
			run:  newRun(),
			eff: func(t *testing.T, r *v1alpha1.BenchmarkRun) v1alpha1.EffectiveDurability {
				p := newRun(func(r *v1alpha1.BenchmarkRun) { r.Spec.System = v1alpha1.SystemPulsar })
				return translate(t, p)
			},
			want: []string{"status.durability has no Kafka settings"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Kafka(tc.run, tc.eff(t, tc.run))
			if err == nil {
				t.Fatalf("Kafka succeeded, want an error; got %v", got.Object)
			}
			if got != nil {
				t.Errorf("Kafka returned an object with its error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(err.Error(), n) {
					t.Errorf("error %q names the allowed key %q", err, n)
				}
			}
		})
	}
}

// withSecurity sets spec.cluster.managed.security.
func withSecurity(tls bool, auth v1alpha1.ManagedAuthentication) func(*v1alpha1.BenchmarkRun) {
	return func(r *v1alpha1.BenchmarkRun) {
		r.Spec.Cluster.Managed.Security = &v1alpha1.ManagedSecurity{TLS: tls, Authentication: auth}
	}
}

// securedKafka is newRun()'s Kafka with the listener given (YAML flow) and
// the entity operator with the User Operator alone when userOperator.
func securedKafka(listener string, userOperator bool) string {
	eo := ""
	if userOperator {
		eo = "\n  entityOperator:\n    userOperator: {}"
	}
	return `
apiVersion: kafka.strimzi.io/v1
kind: Kafka
metadata:
  name: run-a
  namespace: bench
  labels:
    app.kubernetes.io/managed-by: streambench
    streambench.io/run: run-a
spec:` + eo + `
  kafka:
    listeners:
    - ` + listener + `
    config:
      offsets.topic.replication.factor: "3"
      transaction.state.log.replication.factor: "3"
      transaction.state.log.min.isr: "2"
      default.replication.factor: "3"
      min.insync.replicas: "2"
      unclean.leader.election.enable: "false"
    metricsConfig:
      type: jmxPrometheusExporter
      valueFrom:
        configMapKeyRef: {name: run-a-metrics, key: kafka-metrics-config.yml}
`
}

// The durability translation's broker keys must never be keys Strimzi
// drops, or a run would report settings its brokers do not have.
func TestDurabilityBrokerKeysAreAllowed(t *testing.T) {
	for _, level := range []v1alpha1.Level{v1alpha1.Level1, v1alpha1.Level2, v1alpha1.Level3, v1alpha1.Level4} {
		run := newRun(func(r *v1alpha1.BenchmarkRun) { r.Spec.Durability.Level = ptr.To(level) })
		eff := translate(t, run)
		for k := range eff.Kafka.Broker {
			if p := forbiddenPrefix(k); p != "" {
				t.Errorf("level %d: durability broker key %q falls under Strimzi's forbidden prefix %q", level, k, p)
			}
		}
		kafka, err := Kafka(run, eff)
		if err != nil {
			t.Fatalf("level %d: %v", level, err)
		}
		for k, v := range eff.Kafka.Broker {
			got, _ := kafka.Object["spec"].(map[string]any)["kafka"].(map[string]any)["config"].(map[string]any)[k]
			if got != v {
				t.Errorf("level %d: spec.kafka.config[%q] = %v, want %q from the durability translation", level, k, got, v)
			}
		}
	}
}

func TestForbiddenPrefix(t *testing.T) {
	tests := map[string]string{
		"listeners":                                   "listeners",
		"listener.name.plain.x":                       "listener.",
		"LOG.DIRS":                                    "log.dir",
		"metadata.log.dir":                            "metadata.log.dir",
		"port":                                        "port",
		"inter.broker.listener.name":                  "inter.broker.listener.name",
		"authorizer.class.name":                       "authorizer.",
		"super.users":                                 "super.user",
		"controller.quorum.voters":                    "controller.",
		"controller.quorum.fetch.timeout.ms":          "",
		"ssl.enabled.protocols":                       "",
		"sasl.server.max.receive.size":                "",
		"log.flush.interval.messages":                 "",
		"log.flush.interval.ms":                       "",
		"min.insync.replicas":                         "",
		"unclean.leader.election.enable":              "",
		"num.replica.fetchers":                        "",
		"replica.lag.time.max.ms":                     "",
		"log.segment.bytes":                           "",
		"cruise.control.metrics.topic":                "cruise.control.metrics.topic",
		"cruise.control.metrics.topic.num.partitions": "",
		// Strimzi 1.2.0 drops these (they were missing here once) ...
		"client.quota.callback.static.produce": "client.quota.callback.static.produce",
		"prometheus.metrics.reporter.enabled":  "prometheus.metrics.reporter.",
		"cordoned.log.dirs":                    "cordoned.log.dirs",
		// ... and passes these (they were refused here once).
		"broker.session.timeout.ms":    "",
		"broker.heartbeat.interval.ms": "",
		"controller.socket.timeout.ms": "",
	}
	for key, want := range tests {
		if got := forbiddenPrefix(key); got != want {
			t.Errorf("forbiddenPrefix(%q) = %q, want %q", key, got, want)
		}
	}
}

// TestForbiddenListsAreStrimzis reads Strimzi's own lists out of its Java
// model (io.strimzi:api at StrimziVersion, from Maven Central, read with
// javap) and compares them with the builder's: a Strimzi upgrade that
// changes them fails here instead of a run reporting settings Strimzi
// dropped, or refusing ones it allows.
func TestForbiddenListsAreStrimzis(t *testing.T) {
	if err := localbrokers.CheckJava(); err != nil {
		t.Fatal(err)
	}
	jar := filepath.Join(t.TempDir(), "api.jar")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// The plugin version is pinned, as in localbrokers.FetchJars.
	get := exec.CommandContext(ctx, "mvn", "-B", "-q", "org.apache.maven.plugins:maven-dependency-plugin:2.8:get",
		"-Dartifact=io.strimzi:api:"+StrimziVersion, "-Dtransitive=false", "-Ddest="+jar)
	if out, err := get.CombinedOutput(); err != nil {
		t.Fatalf("fetching io.strimzi:api:%s from Maven Central: %v\n%s", StrimziVersion, err, out)
	}
	out, err := exec.CommandContext(ctx, "javap", "-constants", "-cp", jar, "io.strimzi.api.kafka.model.kafka.KafkaClusterSpec").CombinedOutput()
	if err != nil {
		t.Fatalf("javap: %v\n%s", err, out)
	}
	constant := func(name string) []string {
		re := regexp.MustCompile(`String ` + name + ` = "([^"]*)";`)
		m := re.FindSubmatch(out)
		if m == nil {
			t.Fatalf("KafkaClusterSpec of Strimzi %s has no constant %s:\n%s", StrimziVersion, name, out)
		}
		var list []string
		for _, p := range strings.Split(string(m[1]), ",") {
			list = append(list, strings.TrimSpace(p))
		}
		return list
	}
	for _, c := range []struct {
		name string
		ours []string
	}{
		{"FORBIDDEN_PREFIXES", forbiddenConfigPrefixes},
		{"FORBIDDEN_PREFIX_EXCEPTIONS", forbiddenConfigExceptions},
	} {
		theirs := constant(c.name)
		if !slices.Equal(slices.Sorted(slices.Values(theirs)), slices.Sorted(slices.Values(c.ours))) {
			t.Errorf("Strimzi %s's %s:\n  %q\nours:\n  %q", StrimziVersion, c.name, theirs, c.ours)
		}
	}
}
