package pulsar

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// StatefulSetNames are the StatefulSets of a release that Values enables,
// in the order the cluster comes up.
func StatefulSetNames(release string) []string {
	names := make([]string, len(statefulSetComponents))
	for i, c := range statefulSetComponents {
		names[i] = release + "-" + c
	}
	return names
}

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
