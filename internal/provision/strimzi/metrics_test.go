package strimzi

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

func TestMetricsConfigMap(t *testing.T) {
	run := newRun()
	got := MetricsConfigMap(run)
	want := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      "run-a-metrics",
			Namespace: "bench",
			Labels:    map[string]string{"app.kubernetes.io/managed-by": "streambench", "streambench.io/run": "run-a"},
		},
		Data: map[string]string{"kafka-metrics-config.yml": metricsRules},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ConfigMap mismatch (-want +got):\n%s", diff)
	}

	// The Kafka must point at this ConfigMap and key.
	kafka, err := Kafka(run, translate(t, run))
	if err != nil {
		t.Fatal(err)
	}
	ref := kafka.Object["spec"].(map[string]any)["kafka"].(map[string]any)["metricsConfig"].(map[string]any)["valueFrom"].(map[string]any)["configMapKeyRef"].(map[string]any)
	if ref["name"] != got.Name || got.Data[ref["key"].(string)] == "" {
		t.Errorf("spec.kafka.metricsConfig points at %v, the ConfigMap is %s with keys %v", ref, got.Name, keys(got.Data))
	}
}

type exporterConfig struct {
	LowercaseOutputName bool           `json:"lowercaseOutputName"`
	IncludeObjectNames  []string       `json:"includeObjectNames"`
	Rules               []exporterRule `json:"rules"`
}

type exporterRule struct {
	Pattern string            `json:"pattern"`
	Name    string            `json:"name"`
	Type    string            `json:"type"`
	Labels  map[string]string `json:"labels"`
}

var groupRef = regexp.MustCompile(`\$(\d+)`)

// expand replaces $N with capture group N, as Java's replacement syntax
// does ($1_total is group 1 then "_total"; Go's Expand would read a
// group named "1_total").
func expand(tmpl string, groups []string) string {
	return groupRef.ReplaceAllStringFunc(tmpl, func(ref string) string {
		n, _ := strconv.Atoi(ref[1:])
		if n < len(groups) {
			return groups[n]
		}
		return ""
	})
}

// TestMetricsRules runs the exporter's matching on MBean attributes a
// Kafka 4 broker exposes, in the exporter's input format: the first rule
// whose (unanchored) pattern matches names the metric; attributes no rule
// matches are dropped.
func TestMetricsRules(t *testing.T) {
	var cfg exporterConfig
	if err := yaml.UnmarshalStrict([]byte(metricsRules), &cfg); err != nil {
		t.Fatalf("the exporter rules are not valid YAML of the expected shape: %v", err)
	}
	if !cfg.LowercaseOutputName {
		t.Errorf("lowercaseOutputName is off; metric names would keep Kafka's CamelCase")
	}
	// Every rule reads MBeans the exporter queries (includeObjectNames):
	// its domain and type, and for RequestMetrics each request it names.
	mbean := regexp.MustCompile(`^([a-z.]+)<type=([A-Za-z]+)`)
	requests := regexp.MustCompile(`request=\(?([A-Za-z|]+)\)?>`)
	for i, r := range cfg.Rules {
		m := mbean.FindStringSubmatch(r.Pattern)
		if m == nil {
			t.Errorf("rule %d: pattern %q names no domain<type=...>", i, r.Pattern)
			continue
		}
		want := []string{m[1] + ":type=" + m[2] + ",*"}
		if q := requests.FindStringSubmatch(r.Pattern); q != nil {
			want = nil
			for _, req := range strings.Split(q[1], "|") {
				want = append(want, m[1]+":type="+m[2]+",request="+req+",*")
			}
		}
		for _, w := range want {
			if !slices.Contains(cfg.IncludeObjectNames, w) {
				t.Errorf("rule %d (%s) reads MBeans includeObjectNames leaves out: want %q in %q", i, r.Pattern, w, cfg.IncludeObjectNames)
			}
		}
	}
	res := make([]*regexp.Regexp, len(cfg.Rules))
	for i, r := range cfg.Rules {
		re, err := regexp.Compile(r.Pattern)
		if err != nil {
			t.Fatalf("rule %d: pattern %q: %v", i, r.Pattern, err)
		}
		res[i] = re
		if r.Name == "" || (r.Type != "GAUGE" && r.Type != "COUNTER") {
			t.Errorf("rule %d (%s): name %q, type %q; want a name and GAUGE or COUNTER", i, r.Pattern, r.Name, r.Type)
		}
		if r.Type == "COUNTER" && !strings.HasSuffix(r.Name, "_total") && !strings.HasSuffix(r.Name, "_count") {
			t.Errorf("rule %d: counter %q should end in _total", i, r.Name)
		}
	}

	type metric struct {
		Name   string
		Labels map[string]string
	}
	tests := []struct {
		mbean string
		want  *metric // nil: dropped
	}{
		{"kafka.server<type=BrokerTopicMetrics, name=MessagesInPerSec, topic=bench-0><>Count: 1000",
			&metric{"kafka_server_brokertopicmetrics_messagesin_total", map[string]string{"topic": "bench-0"}}},
		{"kafka.server<type=BrokerTopicMetrics, name=BytesInPerSec><>Count: 1024000",
			&metric{"kafka_server_brokertopicmetrics_bytesin_total", map[string]string{}}},
		{"kafka.server<type=BrokerTopicMetrics, name=ReplicationBytesInPerSec><>Count: 2048000",
			&metric{"kafka_server_brokertopicmetrics_replicationbytesin_total", map[string]string{}}},
		{"kafka.server<type=BrokerTopicMetrics, name=BytesOutPerSec, topic=bench-0><>OneMinuteRate: 1.5", nil},
		{"kafka.network<type=RequestMetrics, name=TotalTimeMs, request=Produce><>99thPercentile: 4.2",
			&metric{"kafka_network_requestmetrics_totaltimems", map[string]string{"request": "Produce", "quantile": "0.99"}}},
		{"kafka.network<type=RequestMetrics, name=RemoteTimeMs, request=Produce><>999thPercentile: 9.1",
			&metric{"kafka_network_requestmetrics_remotetimems", map[string]string{"request": "Produce", "quantile": "0.999"}}},
		{"kafka.network<type=RequestMetrics, name=LocalTimeMs, request=FetchFollower><>50thPercentile: 0.3",
			&metric{"kafka_network_requestmetrics_localtimems", map[string]string{"request": "FetchFollower", "quantile": "0.50"}}},
		{"kafka.network<type=RequestMetrics, name=RequestQueueTimeMs, request=FetchConsumer><>Mean: 0.1",
			&metric{"kafka_network_requestmetrics_requestqueuetimems_mean", map[string]string{"request": "FetchConsumer"}}},
		{"kafka.network<type=RequestMetrics, name=TotalTimeMs, request=Produce><>Count: 77",
			&metric{"kafka_network_requestmetrics_requests_total", map[string]string{"request": "Produce"}}},
		{"kafka.network<type=RequestMetrics, name=TotalTimeMs, request=Metadata><>99thPercentile: 1", nil},
		{"kafka.network<type=RequestMetrics, name=TotalTimeMs, request=Produce><>75thPercentile: 1", nil},
		{"kafka.log<type=LogFlushStats, name=LogFlushRateAndTimeMs><>99thPercentile: 3.0",
			&metric{"kafka_log_logflushstats_flushtimems", map[string]string{"quantile": "0.99"}}},
		{"kafka.log<type=LogFlushStats, name=LogFlushRateAndTimeMs><>Count: 12",
			&metric{"kafka_log_logflushstats_flushes_total", map[string]string{}}},
		{"kafka.server<type=DelayedOperationPurgatory, name=PurgatorySize, delayedOperation=Produce><>Value: 3",
			&metric{"kafka_server_delayedoperationpurgatory_size", map[string]string{"operation": "Produce"}}},
		{"kafka.server<type=ReplicaManager, name=UnderMinIsrPartitionCount><>Value: 0",
			&metric{"kafka_server_replicamanager_underminisrpartitioncount", map[string]string{}}},
		{"kafka.server<type=ReplicaManager, name=IsrShrinksPerSec><>Count: 2",
			&metric{"kafka_server_replicamanager_isrshrinks_total", map[string]string{}}},
		{"kafka.server<type=KafkaRequestHandlerPool, name=RequestHandlerAvgIdlePercent><>OneMinuteRate: 0.8",
			&metric{"kafka_server_requesthandler_idle_ratio", map[string]string{}}},
		{"kafka.network<type=SocketServer, name=NetworkProcessorAvgIdlePercent><>Value: 0.9",
			&metric{"kafka_network_processor_idle_ratio", map[string]string{}}},
		{"kafka.controller<type=KafkaController, name=ActiveControllerCount><>Value: 1",
			&metric{"kafka_controller_kafkacontroller_activecontrollercount", map[string]string{}}},
		{"kafka.server<type=socket-server-metrics, listener=PLAIN-9092, networkProcessor=0><>connection-count: 5", nil},
	}
	hit := make([]bool, len(cfg.Rules))
	for _, tc := range tests {
		var got *metric
		for i, r := range cfg.Rules {
			groups := res[i].FindStringSubmatch(tc.mbean)
			if groups == nil {
				continue
			}
			hit[i] = true
			got = &metric{Name: expand(r.Name, groups), Labels: map[string]string{}}
			if cfg.LowercaseOutputName {
				got.Name = strings.ToLower(got.Name)
			}
			for k, v := range r.Labels {
				got.Labels[expand(k, groups)] = expand(v, groups)
			}
			break
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.mbean, diff)
		}
	}
	for i, h := range hit {
		if !h {
			t.Errorf("rule %d (%s) matches none of the test's MBeans; add one or drop the rule", i, cfg.Rules[i].Pattern)
		}
	}
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// The metrics ConfigMap belongs to the same run as the Kafka.
func TestMetricsConfigMapName(t *testing.T) {
	run := newRun(func(r *v1alpha1.BenchmarkRun) { r.Name = "Run.A" })
	if got, want := MetricsConfigMap(run).Name, "run-a-b42ccc53-metrics"; got != want {
		t.Errorf("name %q, want %q", got, want)
	}
}
