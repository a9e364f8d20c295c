package pulsar

import (
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/podsched"
)

// StatefulSetNames are the StatefulSets of a release that Values enables,
// in the order the cluster comes up.
func StatefulSetNames(release string) []string {
	names := make([]string, len(statefulSetComponents))
	for i, c := range statefulSetComponents {
		names[i] = StatefulSetName(release, c)
	}
	return names
}

// StatefulSetName is the chart's StatefulSet of one component.
func StatefulSetName(release, component string) string { return release + "-" + component }

// InitJobNames are the release's init Jobs: cluster metadata in
// ZooKeeper, then the BookKeeper cluster.
func InitJobNames(release string) []string {
	return []string{release + "-" + JobPulsarInit, release + "-" + JobBookieInit}
}

// InitJobFailedError says an init Job of the release gave up: the cluster
// can never become ready, and waiting for the provisioning deadline would
// only hide the cause.
type InitJobFailedError struct {
	Job     string
	Reason  string
	Message string
}

func (e *InitJobFailedError) Error() string {
	s := fmt.Sprintf("init Job %s failed", e.Job)
	if e.Reason != "" {
		s += " (" + e.Reason + ")"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s + "; see its pods' logs (kubectl logs job/" + e.Job + "), then run again with a new BenchmarkRun"
}

// Ready reports whether the release's Pulsar cluster is up: every
// StatefulSet of StatefulSetNames has all its replicas ready, in a status
// observed at its current generation, and both init Jobs succeeded. The
// reason says what is still missing, or that all is ready.
//
// err is not nil only when the cluster cannot become ready: an init Job
// failed for good (its Failed condition is True, i.e. it ran out of
// retries). A Job that is missing or still retrying is "not yet".
func Ready(statefulSets []appsv1.StatefulSet, jobs []batchv1.Job, release string) (bool, string, error) {
	bySTS := make(map[string]*appsv1.StatefulSet, len(statefulSets))
	for i := range statefulSets {
		bySTS[statefulSets[i].Name] = &statefulSets[i]
	}
	byJob := make(map[string]*batchv1.Job, len(jobs))
	for i := range jobs {
		byJob[jobs[i].Name] = &jobs[i]
	}

	var waiting []string
	for _, name := range InitJobNames(release) {
		job, ok := byJob[name]
		if !ok {
			// The chart renders the init Jobs on helm install only.
			waiting = append(waiting, fmt.Sprintf("Job %s not created yet", name))
			continue
		}
		if c := jobCondition(job, batchv1.JobFailed); c != nil {
			return false, fmt.Sprintf("Job %s failed", name), &InitJobFailedError{Job: name, Reason: c.Reason, Message: c.Message}
		}
		if c := jobCondition(job, batchv1.JobComplete); c == nil && job.Status.Succeeded == 0 {
			waiting = append(waiting, fmt.Sprintf("Job %s not complete (%d failed attempts)", name, job.Status.Failed))
		}
	}
	for _, name := range StatefulSetNames(release) {
		sts, ok := bySTS[name]
		if !ok {
			waiting = append(waiting, fmt.Sprintf("StatefulSet %s not created yet", name))
			continue
		}
		if sts.Status.ObservedGeneration < sts.Generation {
			waiting = append(waiting, fmt.Sprintf("StatefulSet %s: status is of generation %d, spec is at %d", name, sts.Status.ObservedGeneration, sts.Generation))
			continue
		}
		want := int32(1)
		if sts.Spec.Replicas != nil {
			want = *sts.Spec.Replicas
		}
		if sts.Status.ReadyReplicas != want {
			waiting = append(waiting, fmt.Sprintf("StatefulSet %s: %d/%d replicas ready", name, sts.Status.ReadyReplicas, want))
		}
	}
	if len(waiting) > 0 {
		return false, "waiting for " + strings.Join(waiting, "; "), nil
	}
	return true, fmt.Sprintf("StatefulSets %s ready; init Jobs complete", strings.Join(StatefulSetNames(release), ", ")), nil
}

// PodLabels select every pod of the release: the chart's template labels
// (app is the chart's name, which Values does not override).
func PodLabels(release string) map[string]string {
	return map[string]string{"app": DefaultChartName, "release": release}
}

// ComponentPodLabels select the release's pods of one component
// (ComponentBookie, ComponentBroker, ...).
func ComponentPodLabels(release, component string) map[string]string {
	l := PodLabels(release)
	l[podComponent] = component
	return l
}

// podComponent is the chart's component label on every pod it makes.
const podComponent = "component"

// unschedulableFix says, per component label, what a pod of it the
// scheduler cannot place needs changed.
var unschedulableFix = map[string]string{
	ComponentBookie: "every bookie needs a node of its own (a required anti-affinity keeps two off one node, so that an ensemble's copies are on different machines): " +
		"add nodes that match spec.cluster.managed.placement, or lower spec.cluster.managed.bookies",
	ComponentBroker: "every broker needs a node of its own (a required anti-affinity keeps two off one node, as for Kafka's brokers): " +
		"add nodes that match spec.cluster.managed.placement, or lower spec.cluster.managed.brokers",
	ComponentZooKeeper: "add nodes that match spec.cluster.managed.auxiliaryPlacement (unset: that tolerate nothing but spec.cluster.managed.placement's taints), or change it; " +
		"check spec.cluster.managed.resources.metadataStore, and that spec.cluster.managed.storage.metadataStore's class can bind a volume there",
	ComponentRecovery: "add nodes that match spec.cluster.managed.auxiliaryPlacement (unset: that tolerate nothing but spec.cluster.managed.placement's taints), or change it",
	JobPulsarInit:     "add nodes that match spec.cluster.managed.auxiliaryPlacement (unset: that tolerate nothing but spec.cluster.managed.placement's taints), or change it",
	JobBookieInit:     "add nodes that match spec.cluster.managed.auxiliaryPlacement (unset: that tolerate nothing but spec.cluster.managed.placement's taints), or change it",
}

// Unschedulable says which of the release's pods (PodLabels) the
// scheduler cannot place, with its message and what to change, per
// component, e.g. "bookie pod run-a-pulsar-bookie-2 cannot be scheduled:
// 0/3 nodes are available: 3 node(s) didn't match pod anti-affinity
// rules.; every bookie needs a node of its own ..."; "" when none. The
// chart, like Strimzi, says only that a StatefulSet is not ready.
func Unschedulable(pods []corev1.Pod) string {
	stuck := podsched.Unschedulable(pods)
	if len(stuck) == 0 {
		return ""
	}
	byComponent := map[string][]podsched.Stuck{}
	var order []string
	for _, s := range stuck {
		c := s.Labels[podComponent]
		if byComponent[c] == nil {
			order = append(order, c)
		}
		byComponent[c] = append(byComponent[c], s)
	}
	sort.Strings(order)
	var out []string
	for _, c := range order {
		ss := byComponent[c]
		what := c + " pod"
		if c == "" {
			what = "pod"
		}
		var msg string
		if len(ss) == 1 {
			msg = fmt.Sprintf("%s %s cannot be scheduled: %s", what, ss[0].Pod, ss[0].Message)
		} else {
			msg = fmt.Sprintf("%ss cannot be scheduled (%s)", what, podsched.List(ss))
		}
		if fix := unschedulableFix[c]; fix != "" {
			msg += "; " + fix
		}
		out = append(out, msg)
	}
	return strings.Join(out, "; ")
}

func jobCondition(job *batchv1.Job, typ batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range job.Status.Conditions {
		c := &job.Status.Conditions[i]
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

// brokerHost is the broker Service's in-cluster name. The chart's broker
// Service is headless by default, so the name resolves to every broker
// pod; a Pulsar client uses it for the lookup and then connects to the
// topic owner's advertised address (the broker pod's own name).
func brokerHost(release, namespace string) string {
	return fmt.Sprintf("%s-%s.%s.svc", release, ComponentBroker, namespace)
}

// ServiceURL is the binary-protocol address the workers use. The proxy is
// off (see components), so clients reach the brokers directly, as Kafka
// clients do.
func ServiceURL(release, namespace string) string {
	return fmt.Sprintf("pulsar://%s:%d", brokerHost(release, namespace), BrokerServicePort)
}

// AdminURL is the brokers' admin REST address (namespaces, topics,
// persistence policies).
func AdminURL(release, namespace string) string {
	return fmt.Sprintf("http://%s:%d", brokerHost(release, namespace), BrokerHTTPPort)
}

// ServiceURLTLS is ServiceURL on the brokers' TLS port (pulsar+ssl://).
func ServiceURLTLS(release, namespace string) string {
	return fmt.Sprintf("pulsar+ssl://%s:%d", brokerHost(release, namespace), BrokerServicePortTLS)
}

// AdminURLTLS is AdminURL on the brokers' TLS web port (https://).
func AdminURLTLS(release, namespace string) string {
	return fmt.Sprintf("https://%s:%d", brokerHost(release, namespace), BrokerHTTPSPort)
}

// Endpoints are the addresses a run's clients use: the TLS ports when the
// run asks for TLS (the plaintext ones stay open, as upstream's broker.conf
// has them, for the brokers' own clients), the plaintext ones otherwise.
func Endpoints(run *v1alpha1.BenchmarkRun) v1alpha1.BrokerEndpoints {
	rel := ReleaseName(run)
	if SecurityOf(run).TLS {
		return v1alpha1.BrokerEndpoints{ServiceURL: ServiceURLTLS(rel, run.Namespace), AdminURL: AdminURLTLS(rel, run.Namespace)}
	}
	return v1alpha1.BrokerEndpoints{ServiceURL: ServiceURL(rel, run.Namespace), AdminURL: AdminURL(rel, run.Namespace)}
}
