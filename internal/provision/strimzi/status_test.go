package strimzi

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// kafkaWith is a Kafka as read from the API server, with the given
// generation and status (YAML, indented under "status:").
func kafkaWith(t *testing.T, generation int, status string) string {
	t.Helper()
	s := `
apiVersion: kafka.strimzi.io/v1
kind: Kafka
metadata:
  name: run-a
  namespace: bench
  generation: ` + itoa(int32(generation)) + `
spec:
  kafka: {}
`
	if status != "" {
		s += "status:\n" + status
	}
	return s
}

func TestReady(t *testing.T) {
	tests := []struct {
		name       string
		generation int
		status     string
		wantReady  bool
		wantReason string
	}{
		{
			name:       "ready",
			generation: 2,
			status: `
  observedGeneration: 2
  conditions:
  - {type: Ready, status: "True", lastTransitionTime: "2026-01-01T00:00:00Z"}
  listeners:
  - {name: plain, bootstrapServers: "run-a-kafka-bootstrap.bench.svc:9092"}
`,
			wantReady: true,
		},
		{
			name:       "ready with a warning is still ready",
			generation: 1,
			status: `
  observedGeneration: 1
  conditions:
  - {type: Warning, status: "True", reason: KafkaStorage, message: "deleteClaim is true"}
  - {type: Ready, status: "True"}
`,
			wantReady: true,
		},
		{
			name:       "Ready of an older generation is stale",
			generation: 3,
			status: `
  observedGeneration: 2
  conditions:
  - {type: Ready, status: "True"}
`,
			wantReason: "Kafka run-a: Ready=True is stale: status.observedGeneration is 2, metadata.generation is 3 (the Strimzi cluster operator has not reconciled the current spec yet)",
		},
		{
			name:       "Ready without observedGeneration",
			generation: 1,
			status: `
  conditions:
  - {type: Ready, status: "True"}
`,
			wantReason: "Kafka run-a: Ready=True is stale: status.observedGeneration is none, metadata.generation is 1 (the Strimzi cluster operator has not reconciled the current spec yet)",
		},
		{
			name:       "being deployed",
			generation: 1,
			status: `
  observedGeneration: 1
  conditions:
  - {type: NotReady, status: "True", reason: Creating, message: Kafka cluster is being deployed}
`,
			wantReason: "Kafka run-a: NotReady=True (Creating: Kafka cluster is being deployed)",
		},
		{
			name:       "failed reconciliation",
			generation: 1,
			status: `
  observedGeneration: 1
  conditions:
  - {type: NotReady, status: "True", reason: InvalidResourceException, message: "Tiered storage is not supported"}
`,
			wantReason: "Kafka run-a: NotReady=True (InvalidResourceException: Tiered storage is not supported)",
		},
		{
			name:       "Ready False",
			generation: 1,
			status: `
  observedGeneration: 1
  conditions:
  - {type: Ready, status: "False", reason: NotReady, message: "pods run-a-broker-66b1eb-0 not ready"}
`,
			wantReason: "Kafka run-a: Ready=False (NotReady: pods run-a-broker-66b1eb-0 not ready)",
		},
		{
			name:       "Ready Unknown without reason",
			generation: 1,
			status: `
  conditions:
  - {type: Ready, status: Unknown}
`,
			wantReason: "Kafka run-a: Ready=Unknown",
		},
		{
			name:       "no status",
			generation: 1,
			wantReason: "Kafka run-a: no Ready condition yet (the Strimzi cluster operator has not reported on it; check that it runs and watches namespace bench)",
		},
		{
			name:       "only a warning",
			generation: 1,
			status: `
  conditions:
  - {type: Warning, status: "True", reason: X}
`,
			wantReason: "Kafka run-a: no Ready condition yet (the Strimzi cluster operator has not reported on it; check that it runs and watches namespace bench)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kafka := statusObject(t, kafkaWith(t, tc.generation, tc.status))
			ready, reason := Ready(kafka)
			if ready != tc.wantReady || reason != tc.wantReason {
				t.Errorf("Ready = %v, %q\nwant    %v, %q", ready, reason, tc.wantReady, tc.wantReason)
			}
		})
	}
}

func TestFailed(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	notReady := func(gen int, reason, message string, ago time.Duration) string {
		return `
  observedGeneration: ` + itoa(int32(gen)) + `
  conditions:
  - {type: NotReady, status: "True", reason: "` + reason + `", message: "` + message + `", lastTransitionTime: "` + now.Add(-ago).Format(time.RFC3339) + `"}
`
	}
	tests := []struct {
		name       string
		generation int
		status     string
		want       string
	}{
		{name: "an unsupported version fails at once", generation: 1,
			status: notReady(1, "UnsupportedKafkaVersionException", "Unsupported Kafka.spec.kafka.version: 3.0.0", 0),
			want:   "Kafka run-a: the Strimzi cluster operator could not deploy it: NotReady=True (UnsupportedKafkaVersionException: Unsupported Kafka.spec.kafka.version: 3.0.0)"},
		{name: "an invalid resource fails at once", generation: 1,
			status: notReady(1, "InvalidResourceException", "bad listener", 10*time.Second),
			want:   "Kafka run-a: the Strimzi cluster operator could not deploy it: NotReady=True (InvalidResourceException: bad listener)"},
		{name: "another error fails once it has stood for 5 minutes", generation: 1,
			status: notReady(1, "RuntimeException", "Configuration model /kafka-4.1.1-config-model.json was not found", 6*time.Minute),
			want:   "Kafka run-a: the Strimzi cluster operator could not deploy it: NotReady=True (RuntimeException: Configuration model /kafka-4.1.1-config-model.json was not found)"},
		{name: "another error is given Strimzi's next reconciliations", generation: 1,
			status: notReady(1, "KubernetesClientException", "connection reset", 3*time.Minute)},
		{name: "creating is not a failure", generation: 1, status: notReady(1, "Creating", "Kafka cluster is being deployed", time.Hour)},
		{name: "a timeout is retried, not a failure", generation: 1,
			status: notReady(1, "TimeoutException", "Exceeded timeout of 300000ms while waiting for Pods resource run-a-broker-66b1eb-0 to be ready", time.Hour)},
		{name: "an error of the previous generation says nothing of this one", generation: 2, status: notReady(1, "InvalidResourceException", "bad", 0)},
		{name: "ready", generation: 1, status: `
  observedGeneration: 1
  conditions:
  - {type: Ready, status: "True"}
`},
		{name: "no status", generation: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			failed, why := Failed(statusObject(t, kafkaWith(t, tc.generation, tc.status)), now)
			if failed != (tc.want != "") || why != tc.want {
				t.Errorf("Failed = %v, %q\nwant       %v, %q", failed, why, tc.want != "", tc.want)
			}
		})
	}
}

func TestBootstrap(t *testing.T) {
	tests := []struct {
		name     string
		listener string // "" for the plain listener
		status   string
		want     string
		wantErr  string
	}{
		{
			name: "plain listener",
			status: `
  listeners:
  - name: plain
    addresses: [{host: run-a-kafka-bootstrap.bench.svc, port: 9092}]
    bootstrapServers: run-a-kafka-bootstrap.bench.svc:9092
`,
			want: "run-a-kafka-bootstrap.bench.svc:9092",
		},
		{
			name: "plain among others",
			status: `
  listeners:
  - {name: tls, bootstrapServers: "run-a-kafka-bootstrap.bench.svc:9093"}
  - {name: plain, bootstrapServers: "run-a-kafka-bootstrap.bench.svc:9092"}
`,
			want: "run-a-kafka-bootstrap.bench.svc:9092",
		},
		{
			name:     "tls among others",
			listener: TLSListenerName,
			status: `
  listeners:
  - {name: plain, bootstrapServers: "run-a-kafka-bootstrap.bench.svc:9092"}
  - {name: tls, bootstrapServers: "run-a-kafka-bootstrap.bench.svc:9093"}
`,
			want: "run-a-kafka-bootstrap.bench.svc:9093",
		},
		{
			name:     "tls asked, plain only",
			listener: TLSListenerName,
			status: `
  listeners:
  - {name: plain, bootstrapServers: "run-a-kafka-bootstrap.bench.svc:9092"}
`,
			wantErr: `Kafka run-a: status.listeners has no listener named "tls" (found "plain"); spec.kafka.listeners must include the tls listener on port 9093`,
		},
		{
			name: "no listeners",
			status: `
  conditions:
  - {type: NotReady, status: "True", reason: Creating}
`,
			wantErr: "Kafka run-a has no status.listeners yet; wait until it is Ready",
		},
		{
			name:    "no status",
			wantErr: "Kafka run-a has no status.listeners yet; wait until it is Ready",
		},
		{
			name: "no plain listener",
			status: `
  listeners:
  - {name: tls, bootstrapServers: "x:9093"}
  - {name: external, bootstrapServers: "y:9094"}
`,
			wantErr: `Kafka run-a: status.listeners has no listener named "plain" (found "tls", "external"); spec.kafka.listeners must include the plain listener on port 9092`,
		},
		{
			name: "plain without address",
			status: `
  listeners:
  - {name: plain}
`,
			wantErr: "Kafka run-a: status.listeners[name=plain] has no bootstrapServers yet; wait until it is Ready",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := Listener{Name: ListenerName, Port: ListenerPort}
			if tc.listener != "" {
				l = Listener{Name: tc.listener, Port: TLSListenerPort, TLS: true}
			}
			got, err := Bootstrap(statusObject(t, kafkaWith(t, 1, tc.status)), l)
			switch {
			case tc.wantErr == "" && (err != nil || got != tc.want):
				t.Errorf("Bootstrap = %q, %v; want %q", got, err, tc.want)
			case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr):
				t.Errorf("Bootstrap = %q, %v\nwant error %s", got, err, tc.wantErr)
			}
		})
	}
}

func TestUnschedulableBrokers(t *testing.T) {
	pod := func(name string, conds ...corev1.PodCondition) corev1.Pod {
		p := corev1.Pod{}
		p.Name = name
		p.Status.Conditions = conds
		return p
	}
	unschedulable := func(msg string) corev1.PodCondition {
		return corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: msg}
	}
	scheduled := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}
	for _, tc := range []struct {
		name string
		pods []corev1.Pod
		want string
	}{
		{"none", nil, ""},
		{"all placed", []corev1.Pod{pod("k-0", scheduled), pod("k-1")}, ""},
		{"two brokers, one node", []corev1.Pod{
			pod("k-1", unschedulable("0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules.")),
			pod("k-0", scheduled),
		}, "broker pods cannot be scheduled (k-1: 0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules.); every broker needs a node of its own"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := UnschedulableBrokers(tc.pods)
			if (tc.want == "") != (got == "") || !strings.HasPrefix(got, tc.want) {
				t.Errorf("got %q, want it to start with %q", got, tc.want)
			}
		})
	}
}
