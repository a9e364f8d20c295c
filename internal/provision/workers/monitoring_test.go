package workers

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	klabels "k8s.io/apimachinery/pkg/labels"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/monitoring"
)

// The run's PodMonitor selects exactly its worker and coordinator pods,
// on the port that serves /metrics; the coordinator serves it and asks the
// Prometheus it is given for the brokers' pods.
func TestMonitoringOfWorkersAndCoordinator(t *testing.T) {
	r := managedRun()
	r.Spec.Monitoring = &v1alpha1.MonitoringSpec{PrometheusURL: "http://prom:9090"}
	pm := monitoring.PodMonitors(r, monitoring.Config{Release: "kps"})[0]
	ml, _, _ := unstructured.NestedStringMap(pm.Object, "spec", "selector", "matchLabels")
	exprs, _, _ := unstructured.NestedSlice(pm.Object, "spec", "selector", "matchExpressions")
	sel := klabels.SelectorFromSet(ml)
	for _, e := range exprs {
		m := e.(map[string]any)
		var vals []string
		for _, v := range m["values"].([]any) {
			vals = append(vals, v.(string))
		}
		req, err := klabels.NewRequirement(m["key"].(string), "in", vals)
		if err != nil {
			t.Fatal(err)
		}
		sel = sel.Add(*req)
	}
	coord, err := CoordinatorJob(r, "img", v1alpha1.BrokerEndpoints{BootstrapServers: "k:9092"})
	if err != nil {
		t.Fatal(err)
	}
	port, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
	portName := port[0].(map[string]any)["port"]
	for _, job := range []struct {
		name string
		tmpl map[string]string
		c    []string
		p    string
	}{
		{"worker", WorkerJob(r, "img").Spec.Template.Labels, nil, WorkerJob(r, "img").Spec.Template.Spec.Containers[0].Ports[0].Name},
		{"coordinator", coord.Spec.Template.Labels, coord.Spec.Template.Spec.Containers[0].Args, coord.Spec.Template.Spec.Containers[0].Ports[0].Name},
	} {
		if !sel.Matches(klabels.Set(job.tmpl)) {
			t.Errorf("%s pods %v not selected by %s", job.name, job.tmpl, sel)
		}
		if job.p != portName {
			t.Errorf("%s port %q, the PodMonitor scrapes %q", job.name, job.p, portName)
		}
	}
	args := coord.Spec.Template.Spec.Containers[0].Args
	for _, want := range []string{"--metrics-address=:8080", "--prometheus-url=http://prom:9090", "--broker-namespace=" + r.Namespace, "--broker-pods=" + monitoring.BrokerPods(r)} {
		if !slices.Contains(args, want) {
			t.Errorf("coordinator args lack %q: %v", want, args)
		}
	}
	other := managedRun()
	other.Name = "other"
	if sel.Matches(klabels.Set(WorkerJob(other, "img").Spec.Template.Labels)) {
		t.Errorf("the PodMonitor selects another run's workers")
	}
}

func managedRun() *v1alpha1.BenchmarkRun {
	r := run(v1alpha1.SystemKafka)
	r.Spec.Cluster.Managed = &v1alpha1.ManagedCluster{Brokers: 3}
	return r
}
