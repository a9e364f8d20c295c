// Package monitoring builds what makes a run visible to the monitoring
// stack Kubernetes users already run, kube-prometheus-stack: PodMonitors
// (monitoring.coreos.com/v1, the Prometheus Operator's) for the run's
// Kafka pods (Strimzi's JMX exporter), workers and coordinator, labelled
// for its Prometheus's selector (release: <name>); the Pulsar chart's own
// PodMonitors are switched on in its values instead
// (pulsar.EnablePodMonitors). It also names the broker pods whose
// resources the coordinator asks Prometheus for.
//
// The builders are pure; PodMonitors are unstructured objects, so the
// operator does not depend on the Prometheus Operator's Go module.
package monitoring

import (
	"fmt"
	"regexp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/brokerpods"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
)

// The role label of the worker and coordinator pods
// (internal/provision/workers, which builds the coordinator's arguments
// from this package and so cannot be imported here; a test checks they
// agree).
const (
	labelRole       = "streambench.io/role"
	roleWorker      = "worker"
	roleCoordinator = "coordinator"
)

// PodMonitorGVK is the Prometheus Operator's PodMonitor.
var PodMonitorGVK = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "PodMonitor"}

// DefaultRelease is the release label kube-prometheus-stack's Prometheus
// selects PodMonitors by when installed as `helm install
// kube-prometheus-stack ...` (its podMonitorSelector is
// release: <helm release name>).
const DefaultRelease = "kube-prometheus-stack"

// LabelRelease is the label key of kube-prometheus-stack's default
// selector.
const LabelRelease = "release"

// StrimziMetricsPort is the container port Strimzi gives the JMX
// exporter of a Kafka pod with metricsConfig set.
const StrimziMetricsPort = "tcp-prometheus"

// Config is the operator's monitoring configuration.
type Config struct {
	// Release is the value of the release label on every PodMonitor;
	// empty: no release label (a Prometheus that selects all
	// PodMonitors).
	Release string
}

// Labels are the labels of a run's PodMonitors.
func (c Config) Labels(run *v1alpha1.BenchmarkRun) map[string]string {
	l := map[string]string{strimzi.LabelRun: run.Name, strimzi.LabelManagedBy: "streambench"}
	if c.Release != "" {
		l[LabelRelease] = c.Release
	}
	return l
}

// KafkaName and WorkersName name a run's PodMonitors.
func KafkaName(run *v1alpha1.BenchmarkRun) string   { return strimzi.ClusterName(run) + "-kafka" }
func WorkersName(run *v1alpha1.BenchmarkRun) string { return run.Name + "-streambench" }

// PodMonitors are the PodMonitors a run creates: the workers and the
// coordinator always; the Kafka brokers when streambench deploys them
// (an existing cluster is monitored by whoever runs it). Managed Pulsar
// has the chart's own.
func PodMonitors(run *v1alpha1.BenchmarkRun, c Config) []*unstructured.Unstructured {
	out := []*unstructured.Unstructured{podMonitor(run, c, WorkersName(run),
		map[string]any{
			"matchLabels": map[string]any{strimzi.LabelRun: run.Name},
			"matchExpressions": []any{map[string]any{
				"key": labelRole, "operator": "In", "values": []any{roleWorker, roleCoordinator},
			}},
		},
		// The workers and the coordinator serve /metrics on their HTTP
		// port, without authentication.
		map[string]any{"port": "http", "path": "/metrics", "interval": "10s"})}
	if run.Spec.System == v1alpha1.SystemKafka && run.Spec.Cluster.Managed != nil {
		out = append(out, podMonitor(run, c, KafkaName(run),
			map[string]any{"matchLabels": kafkaPods(run)},
			map[string]any{"port": StrimziMetricsPort, "path": "/metrics", "interval": "15s"}))
	}
	return out
}

// kafkaPods select the pods Strimzi made for a managed run's Kafka
// (brokerpods.All, and strimzi.io/kind=Kafka); of those, the endpoint's
// named port is on the brokers' and controllers', which serve the
// metrics.
func kafkaPods(run *v1alpha1.BenchmarkRun) map[string]any {
	out := map[string]any{strimzi.LabelKind: "Kafka"}
	for k, v := range brokerpods.All(run) {
		out[k] = v
	}
	return out
}

func podMonitor(run *v1alpha1.BenchmarkRun, c Config, name string, selector, endpoint map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(PodMonitorGVK)
	u.SetName(name)
	u.SetNamespace(run.Namespace)
	u.SetLabels(c.Labels(run))
	if run.UID != "" {
		// Owned by the run: deleting it deletes them, also when the
		// operator is not there to tear down.
		t := true
		u.SetOwnerReferences([]metav1.OwnerReference{{
			APIVersion: v1alpha1.GroupVersion.String(), Kind: "BenchmarkRun", Name: run.Name, UID: run.UID,
			Controller: &t, BlockOwnerDeletion: &t,
		}})
	}
	u.Object["spec"] = map[string]any{
		"selector":            selector,
		"namespaceSelector":   map[string]any{"matchNames": []any{run.Namespace}},
		"podMetricsEndpoints": []any{endpoint},
	}
	return u
}

// BrokerPods is a regular expression (PromQL =~, fully anchored) of the
// pod names whose resources are the brokers' in a managed run: Strimzi's
// node pool pods <cluster>-<pool>-<n> (<cluster>-broker-<hash>-<n>, see
// strimzi.PoolName), the Pulsar chart's <release>-broker-<n> and
// <release>-bookie-<n> (the bookies write the data, so their disk is where
// durability costs show). Empty for an
// existing cluster, whose pods streambench does not know.
func BrokerPods(run *v1alpha1.BenchmarkRun) string {
	if run.Spec.Cluster.Managed == nil {
		return ""
	}
	switch run.Spec.System {
	case v1alpha1.SystemKafka:
		return fmt.Sprintf("%s-%s-[0-9]+", regexp.QuoteMeta(strimzi.ClusterName(run)), regexp.QuoteMeta(strimzi.PoolName(run)))
	case v1alpha1.SystemPulsar:
		return fmt.Sprintf("%s-(broker|bookie)-[0-9]+", regexp.QuoteMeta(pulsar.ReleaseName(run)))
	}
	return ""
}

// PrometheusURL is the Prometheus the coordinator asks:
// spec.monitoring.prometheusURL, else what the operator found (status).
func PrometheusURL(run *v1alpha1.BenchmarkRun) string {
	if m := run.Spec.Monitoring; m != nil && m.PrometheusURL != "" {
		return m.PrometheusURL
	}
	if m := run.Status.Monitoring; m != nil {
		return m.PrometheusURL
	}
	return ""
}

// PrometheusServiceLabels select kube-prometheus-stack's Prometheus
// Service of a release (its chart labels it app:
// kube-prometheus-stack-prometheus and release: <release>).
func PrometheusServiceLabels(c Config) map[string]string {
	l := map[string]string{"app": "kube-prometheus-stack-prometheus"}
	if c.Release != "" {
		l[LabelRelease] = c.Release
	}
	return l
}

// PrometheusServicePort is the port kube-prometheus-stack's Prometheus
// Service serves its API on (named http-web).
const PrometheusServicePort = 9090
