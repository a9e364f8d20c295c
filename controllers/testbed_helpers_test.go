package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/faultjob"
	"github.com/streambench/streambench-operator/internal/provision/privileged"
	"github.com/streambench/streambench-operator/internal/provision/probe"
	"github.com/streambench/streambench-operator/internal/provision/workers"
)

// envtest has an API server but no Job controller and no kubelet, so no
// probe ever runs here. playTestbed stands in for both, for every test
// that is not about the testbed: each probe Job gets a pod on its node
// whose container ended with a probe's JSON result, then the Job
// completes; a page-cache Job completes; a Java probe Job's pod ends
// with playedJava. Namespaces labelled manualTestbedLabel are left to the
// test, which plays them by hand, except for the Java probe: that is left
// only in namespaces labelled manualJavaLabel.
const (
	manualTestbedLabel = "streambench.test/manual-testbed"
	manualJavaLabel    = "streambench.test/manual-java"
)

// playedJava is what the played Java probes print: the -version lines of
// Strimzi's image (Red Hat's OpenJDK 17).
const playedJava = `openjdk version "17.0.13" 2024-10-15 LTS
OpenJDK Runtime Environment (Red_Hat-17.0.13.0.11-1) (build 17.0.13+11-LTS)
OpenJDK 64-Bit Server VM (Red_Hat-17.0.13.0.11-1) (build 17.0.13+11-LTS, mixed mode, sharing)
`

func playTestbed(ctx context.Context) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		var jobs batchv1.JobList
		if err := k8sClient.List(ctx, &jobs, client.HasLabels{workers.LabelRole}); err != nil {
			continue
		}
		for i := range jobs.Items {
			job := &jobs.Items[i]
			role := job.Labels[workers.LabelRole]
			if (role != probe.RoleProbe && role != probe.RoleDropCache && role != probe.RoleJava) || jobCondition(job, batchv1.JobComplete) != nil || jobCondition(job, batchv1.JobFailed) != nil {
				continue
			}
			// A privileged Job is in the operator's namespace; its run's
			// namespace says whether the test plays it.
			runNS := job.Namespace
			if l := job.Labels[privileged.LabelRunNamespace]; l != "" {
				runNS = l
			}
			var ns corev1.Namespace
			if err := k8sClient.Get(ctx, client.ObjectKey{Name: runNS}, &ns); err != nil {
				continue
			}
			manual := ns.Labels[manualTestbedLabel] == "true"
			if role == probe.RoleJava {
				manual = ns.Labels[manualJavaLabel] == "true"
			}
			if manual {
				continue
			}
			switch role {
			case probe.RoleProbe:
				node := job.Annotations[probe.AnnotationNode]
				if node == "" {
					node = "worker-node-1"
				}
				if err := probePod(job, node, nodeResult(node, 2.0, 800)); err != nil {
					continue
				}
			case probe.RoleJava:
				if err := terminatedPod(job, probe.RoleJava, playedJava); err != nil {
					continue
				}
			}
			setJobFinished(job, true)
			_ = k8sClient.Status().Update(ctx, job)
		}
	}
}

// nodeResult is a probe's result for a node: fsync p99 and write MB/s as
// given, on each volume the probe was asked for.
func nodeResult(node string, p99, mbps float64) v1alpha1.NodeProbe {
	return v1alpha1.NodeProbe{Node: node, CPUModel: "Test CPU", CPUs: 8, MemoryBytes: 32 << 30, Kernel: "6.8.0",
		Volumes: []v1alpha1.VolumeProbe{{Name: "data", WriteMBPerSec: mbps, WriteBytes: 256 << 20,
			FsyncLatencyMs: v1alpha1.FsyncLatency{Count: 2000, AppendBytes: 4096, P50: p99 / 10, P99: p99, P999: p99 * 2, Max: p99 * 3}}}}
}

// jobControlled is the owner reference the Job controller gives the pods
// it makes: the Job, as controller.
func jobControlled(job *batchv1.Job) []metav1.OwnerReference {
	return []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))}
}

// terminatedPod plays the Job controller and the kubelet for a Job of one
// container: a pod of the Job on the Job's node whose container ended
// with message as its termination message.
func terminatedPod(job *batchv1.Job, role, message string) error {
	c := job.Spec.Template.Spec.Containers[0]
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-x", Namespace: job.Namespace, OwnerReferences: jobControlled(job),
			Labels: map[string]string{jobLabelName: job.Name, workers.LabelRun: job.Labels[workers.LabelRun], workers.LabelRole: role}},
		Spec: corev1.PodSpec{NodeName: job.Annotations[probe.AnnotationNode], RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: c.Name, Image: c.Image}}},
	}
	if err := k8sClient.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{{
		Name: c.Name, Image: c.Image, ImageID: c.Image,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", Message: message}},
	}}}
	return k8sClient.Status().Update(ctx, pod)
}

// probePod plays the Job controller and the kubelet for one probe Job: a
// pod of the Job on node whose probe container terminated with result as
// its termination message.
func probePod(job *batchv1.Job, node string, result v1alpha1.NodeProbe) error {
	msg, err := json.Marshal(result)
	if err != nil {
		return err
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-x", Namespace: job.Namespace, OwnerReferences: jobControlled(job),
			Labels: map[string]string{jobLabelName: job.Name, workers.LabelRun: job.Labels[workers.LabelRun], workers.LabelRole: probe.RoleProbe}},
		Spec: corev1.PodSpec{NodeName: node, RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "probe", Image: testImage}}},
	}
	if err := k8sClient.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "probe", Image: testImage, ImageID: testImage,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", Message: string(msg)}},
	}}}
	return k8sClient.Status().Update(ctx, pod)
}

// manualNamespace is a namespace whose testbed Jobs the test plays itself.
func manualNamespace() string {
	ns := newNamespace()
	labelNamespace(ns, map[string]string{manualTestbedLabel: "true"})
	return ns
}

func labelNamespace(name string, labels map[string]string) {
	var ns corev1.Namespace
	ExpectWithOffset(1, k8sClient.Get(ctx, client.ObjectKey{Name: name}, &ns)).To(Succeed())
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	for k, v := range labels {
		ns.Labels[k] = v
	}
	ExpectWithOffset(1, k8sClient.Update(ctx, &ns)).To(Succeed())
}

// storageClass makes sure the cluster-scoped StorageClass name exists with
// provisioner (specs of the suite share it; none marks a default class,
// which would change every other run's probe).
func storageClass(name, provisioner string) {
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner}
	if err := k8sClient.Create(ctx, sc); apierrors.IsAlreadyExists(err) {
		ExpectWithOffset(1, k8sClient.Get(ctx, client.ObjectKey{Name: name}, sc)).To(Succeed())
		ExpectWithOffset(1, sc.Provisioner).To(Equal(provisioner), "StorageClass %s exists with another provisioner", name)
	} else {
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
	}
}

// brokerPod plays the StatefulSet controller of a Pulsar release: a pod
// of the release's StatefulSet of the component its labels name
// (<release>-<component>, which Helm installed), on node.
func brokerPod(ns, name, node string, labels map[string]string) {
	var sts appsv1.StatefulSet
	EventuallyWithOffset(1, func() error {
		return k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: labels["release"] + "-" + labels["component"]}, &sts)
	}).Should(Succeed())
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(&sts, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "kafka", Image: "broker:1"}}},
	}
	ExpectWithOffset(1, k8sClient.Create(ctx, pod)).To(Succeed())
}

func jobNamesWithRole(ns, role string) func() []string {
	return jobNames(client.InNamespace(ns), client.MatchingLabels{workers.LabelRole: role})
}

// privilegedJobNames are run's privileged Jobs of role, in the operator's
// namespace, found by the run's UID.
func privilegedJobNames(run *v1alpha1.BenchmarkRun, role string) func() []string {
	return jobNames(client.InNamespace(operatorNamespace), client.MatchingLabels{workers.LabelRole: role, privileged.LabelRunUID: string(run.UID)})
}

func jobNames(opts ...client.ListOption) func() []string {
	return func() []string {
		var jobs batchv1.JobList
		Expect(k8sClient.List(ctx, &jobs, opts...)).To(Succeed())
		var out []string
		for _, j := range jobs.Items {
			out = append(out, fmt.Sprintf("%s@%s", j.Name, j.Annotations[probe.AnnotationNode]))
		}
		return out
	}
}

// getPrivilegedJob waits for the privileged Job name in the operator's
// namespace.
func getPrivilegedJob(name string) *batchv1.Job {
	var job batchv1.Job
	EventuallyWithOffset(1, func() error {
		return k8sClient.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: name}, &job)
	}).Should(Succeed())
	return &job
}

// noPrivilegedJobIn says the run's namespace holds no privileged Job of
// role: what a tenant could exec into.
func noPrivilegedJobIn(ns string) {
	for _, role := range []string{probe.RoleDropCache, faultjob.Role} {
		ExpectWithOffset(1, jobNamesWithRole(ns, role)()).To(BeEmpty(), "a privileged %s Job in the run's namespace %s", role, ns)
	}
}

// labelOperatorNamespace sets the operator's namespace's labels for the
// spec, and restores them after it: the specs share the namespace.
func labelOperatorNamespace(labels map[string]string) {
	var ns corev1.Namespace
	ExpectWithOffset(1, k8sClient.Get(ctx, client.ObjectKey{Name: operatorNamespace}, &ns)).To(Succeed())
	before := ns.Labels
	DeferCleanup(func() {
		var ns corev1.Namespace
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: operatorNamespace}, &ns)).To(Succeed())
		ns.Labels = before
		Expect(k8sClient.Update(ctx, &ns)).To(Succeed())
	})
	labelNamespace(operatorNamespace, labels)
}
