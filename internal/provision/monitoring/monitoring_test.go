package monitoring

import (
	"regexp"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
)

func run(sys v1alpha1.System, managed bool) *v1alpha1.BenchmarkRun {
	r := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "run-a", Namespace: "bench", UID: "u-1"}, Spec: v1alpha1.BenchmarkRunSpec{System: sys}}
	if managed {
		r.Spec.Cluster.Managed = &v1alpha1.ManagedCluster{Brokers: 3}
	} else {
		r.Spec.Cluster.Existing = &v1alpha1.ExistingCluster{BootstrapServers: "k:9092"}
	}
	return r
}

func str(u *unstructured.Unstructured, path ...string) string {
	v, _, _ := unstructured.NestedString(u.Object, path...)
	return v
}

func TestPodMonitors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		run     *v1alpha1.BenchmarkRun
		release string
		want    []string // names
	}{
		{"managed Kafka: brokers and workers", run(v1alpha1.SystemKafka, true), "kps", []string{"run-a-streambench", "run-a-kafka"}},
		{"existing Kafka: workers only", run(v1alpha1.SystemKafka, false), "kps", []string{"run-a-streambench"}},
		{"managed Pulsar: the chart has its own", run(v1alpha1.SystemPulsar, true), "", []string{"run-a-streambench"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pms := PodMonitors(tc.run, Config{Release: tc.release})
			if len(pms) != len(tc.want) {
				t.Fatalf("%d PodMonitors, want %v", len(pms), tc.want)
			}
			for i, pm := range pms {
				if pm.GetName() != tc.want[i] || pm.GetNamespace() != "bench" || pm.GroupVersionKind() != PodMonitorGVK {
					t.Errorf("PodMonitor %d: %s %s/%s", i, pm.GroupVersionKind(), pm.GetNamespace(), pm.GetName())
				}
				rel, has := pm.GetLabels()[LabelRelease]
				if (tc.release != "") != has || rel != tc.release {
					t.Errorf("%s: release label %q (present %v), want %q", pm.GetName(), rel, has, tc.release)
				}
				if o := pm.GetOwnerReferences(); len(o) != 1 || o[0].UID != "u-1" || o[0].Kind != "BenchmarkRun" {
					t.Errorf("%s: owner %v, want the run", pm.GetName(), o)
				}
				eps, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
				if len(eps) != 1 || eps[0].(map[string]any)["path"] != "/metrics" {
					t.Errorf("%s: endpoints %v", pm.GetName(), eps)
				}
			}
			w := pms[0]
			if str(w, "spec", "selector", "matchLabels", strimzi.LabelRun) != "run-a" {
				t.Errorf("workers selector %v", w.Object["spec"])
			}
			if len(pms) > 1 && (str(pms[1], "spec", "selector", "matchLabels", "strimzi.io/cluster") != "run-a" ||
				str(pms[1], "spec", "selector", "matchLabels", "strimzi.io/kind") != "Kafka") {
				t.Errorf("kafka selector %v", pms[1].Object["spec"])
			}
		})
	}
}

func TestBrokerPods(t *testing.T) {
	for _, tc := range []struct {
		run      *v1alpha1.BenchmarkRun
		match    []string
		notMatch []string
	}{
		{run(v1alpha1.SystemKafka, true), []string{"run-a-broker-66b1eb-0", "run-a-broker-66b1eb-12"}, []string{"run-a-entity-operator-5d4f", "run-a-broker-66b1eb-0x", "run-a-run-a-0", "run-b-broker-66b1eb-0"}},
		{run(v1alpha1.SystemPulsar, true), []string{"run-a-pulsar-broker-0", "run-a-pulsar-bookie-2"}, []string{"run-a-pulsar-zookeeper-0", "run-a-pulsar-toolset-0"}},
	} {
		re := regexp.MustCompile("^(?:" + BrokerPods(tc.run) + ")$")
		for _, m := range tc.match {
			if !re.MatchString(m) {
				t.Errorf("%s: %s should match %s", tc.run.Spec.System, re, m)
			}
		}
		for _, m := range tc.notMatch {
			if re.MatchString(m) {
				t.Errorf("%s: %s should not match %s", tc.run.Spec.System, re, m)
			}
		}
	}
	if BrokerPods(run(v1alpha1.SystemKafka, false)) != "" {
		t.Errorf("an existing cluster's pods are not known")
	}
}

func TestPrometheusURL(t *testing.T) {
	r := run(v1alpha1.SystemKafka, true)
	if PrometheusURL(r) != "" {
		t.Errorf("no URL without spec or status")
	}
	r.Status.Monitoring = &v1alpha1.MonitoringStatus{PrometheusURL: "http://found:9090"}
	if PrometheusURL(r) != "http://found:9090" {
		t.Errorf("status URL not used")
	}
	r.Spec.Monitoring = &v1alpha1.MonitoringSpec{PrometheusURL: "http://given:9090"}
	if PrometheusURL(r) != "http://given:9090" {
		t.Errorf("spec URL does not win")
	}
}
