package controllers

import (
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
	"github.com/streambench/streambench-operator/internal/provision/workers"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
)

// The suite plays the parts of what envtest does not run: the Strimzi
// operator (it sets the Kafka's status), the Job controller and kubelet
// (they set Job and pod status), and the coordinator (it writes the results
// ConfigMap with the real results package).

func key(run *v1alpha1.BenchmarkRun) types.NamespacedName {
	return types.NamespacedName{Namespace: run.Namespace, Name: run.Name}
}

func getRun(run *v1alpha1.BenchmarkRun) *v1alpha1.BenchmarkRun {
	var got v1alpha1.BenchmarkRun
	Expect(k8sClient.Get(ctx, key(run), &got)).To(Succeed())
	return &got
}

// waitPhase waits for the run to reach phase and returns it.
func waitPhase(run *v1alpha1.BenchmarkRun, phase v1alpha1.Phase) *v1alpha1.BenchmarkRun {
	var got v1alpha1.BenchmarkRun
	EventuallyWithOffset(1, func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, key(run), &got)).To(Succeed())
		g.Expect(got.Status.Phase).To(Equal(phase), "status.message: %s", got.Status.Message)
	}).Should(Succeed())
	return &got
}

// installStrimziCRDs installs the minimal Strimzi CRDs of config/test.
func installStrimziCRDs() {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, f := range []string{"kafka.strimzi.io_kafkas.yaml", "kafka.strimzi.io_kafkanodepools.yaml", "kafka.strimzi.io_kafkausers.yaml", "core.strimzi.io_strimzipodsets.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "config", "test", "strimzi", f))
		Expect(err).NotTo(HaveOccurred())
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(yaml.Unmarshal(data, crd)).To(Succeed())
		crds = append(crds, crd)
	}
	_, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: crds})
	Expect(err).NotTo(HaveOccurred())
}

// strimziReady plays the Strimzi operator: the Kafka becomes Ready at its
// current generation with a plain listener.
func strimziReady(run *v1alpha1.BenchmarkRun) string {
	kafka := &unstructured.Unstructured{}
	kafka.SetGroupVersionKind(strimzi.KafkaGVK)
	Eventually(func() error {
		return k8sClient.Get(ctx, types.NamespacedName{Namespace: run.Namespace, Name: strimzi.ClusterName(run)}, kafka)
	}).Should(Succeed())
	bootstrap := strimzi.ClusterName(run) + "-kafka-bootstrap." + run.Namespace + ".svc:9092"
	kafka.Object["status"] = map[string]any{
		"observedGeneration": kafka.GetGeneration(),
		"conditions":         []any{map[string]any{"type": "Ready", "status": "True"}},
		"listeners":          []any{map[string]any{"name": "plain", "bootstrapServers": bootstrap}},
	}
	Expect(k8sClient.Status().Update(ctx, kafka)).To(Succeed())
	return bootstrap
}

func getJob(run *v1alpha1.BenchmarkRun, name string) *batchv1.Job {
	var job batchv1.Job
	EventuallyWithOffset(1, func() error {
		return k8sClient.Get(ctx, types.NamespacedName{Namespace: run.Namespace, Name: name}, &job)
	}).Should(Succeed())
	return &job
}

// finishJob plays the Job controller: the Job succeeds (or fails).
func finishJob(job *batchv1.Job, succeeded bool) {
	setJobFinished(job, succeeded)
	ExpectWithOffset(1, k8sClient.Status().Update(ctx, job)).To(Succeed())
}

// setJobFinished sets the status the Job controller gives a finished Job.
func setJobFinished(job *batchv1.Job, succeeded bool) {
	now := metav1.Now()
	// The API server refuses to move a started Job's startTime (immutable
	// once set, for an unsuspended Job), so a Job already started keeps it:
	// setting it again passed only when both writes fell in one second.
	if job.Status.StartTime == nil {
		start := metav1.NewTime(now.Add(-time.Minute))
		job.Status.StartTime = &start
	}
	if succeeded {
		job.Status.CompletionTime = &now
		job.Status.Succeeded = 1
		if job.Spec.Completions != nil {
			job.Status.Succeeded = *job.Spec.Completions
		}
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
		}
	} else {
		job.Status.Failed = 1
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: now, LastProbeTime: now},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: now, LastProbeTime: now},
		}
	}
}

// writeResults plays the coordinator: real measurements recorded with the
// stats package, summarised and written with the results package.
func writeResults(run *v1alpha1.BenchmarkRun) *results.Summary {
	return writeResultsWith(run, run.Status.Durability)
}

// writeResultsWith is writeResults with the durability the coordinator
// reports (for an existing cluster: what it read from the brokers).
func writeResultsWith(run *v1alpha1.BenchmarkRun, d *v1alpha1.EffectiveDurability) *results.Summary {
	return writeRepeatedResults(run, d, 0)
}

// writeRepeatedResults plays the coordinator of a repeated run: repeat i
// (from 0) publishes with i ms more latency than the first; with no
// repeats, a run not repeated.
func writeRepeatedResults(run *v1alpha1.BenchmarkRun, d *v1alpha1.EffectiveDurability, repeats int) *results.Summary {
	var ins []results.Input
	for r := range max(repeats, 1) {
		start := time.Now().Add(-10 * time.Second)
		rec := stats.NewRecorder("worker-0", stats.PhaseMeasure, start)
		sub := rec.Subscription("sub-0", false)
		for i := 0; i < 1000; i++ {
			sent := start.Add(time.Duration(i) * 10 * time.Millisecond)
			rec.RecordSend(sent, sent, 1024)
			rec.RecordAck(sent, sent, sent.Add(time.Duration(2+r+i%5)*time.Millisecond), 1024)
			sub.RecordReceive(sent, sent.Add(4*time.Millisecond), 1024)
		}
		snap := rec.Cut(start.Add(10 * time.Second))
		ins = append(ins, results.Input{
			Run: run.Name, Namespace: run.Namespace,
			Owner:      &results.OwnerRef{Name: run.Name, UID: string(run.UID)},
			System:     run.Spec.System,
			Workload:   run.Spec.Workload,
			Durability: d,
			Snapshots:  []stats.Snapshot{snap},
		})
	}
	cm, summary, err := results.BuildRepeatedConfigMap(ins)
	Expect(err).NotTo(HaveOccurred())
	Expect(results.Write(ctx, k8sClient, cm)).To(Succeed())
	return summary
}

// loadJob is the run's Job of role: the coordinator's or the workers'.
func loadJob(run *v1alpha1.BenchmarkRun, role string) *batchv1.Job {
	if role == workers.RoleCoord {
		return getJob(run, workers.CoordinatorName(run))
	}
	return getJob(run, workers.WorkerJobName(run))
}

// failPod plays the Job controller and the kubelet: a pod of the run's Job
// of role whose container exited with an error.
func failPod(run *v1alpha1.BenchmarkRun, role, message string) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: run.Name + "-" + role + "-0", Namespace: run.Namespace,
			Labels:          map[string]string{workers.LabelRun: run.Name, workers.LabelRole: role},
			OwnerReferences: jobControlled(loadJob(run, role)),
		},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: role, Image: testImage}}},
	}
	Expect(k8sClient.Create(ctx, pod)).To(Succeed())
	pod.Status = corev1.PodStatus{
		Phase: corev1.PodFailed,
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: role, Image: testImage, ImageID: testImage,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: message}},
		}},
	}
	Expect(k8sClient.Status().Update(ctx, pod)).To(Succeed())
}

// gone reports whether obj no longer exists.
func gone(obj client.Object) func() bool {
	return func() bool {
		err := k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err)
	}
}

// pulsarReady plays the StatefulSet and Job controllers of a Helm release.
func pulsarReady(ns, release string, names []string, jobs []string) {
	for _, name := range names {
		var sts appsv1.StatefulSet
		Eventually(func() error {
			return k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &sts)
		}).Should(Succeed(), "StatefulSet %s of release %s", name, release)
		sts.Status.ObservedGeneration = sts.Generation
		sts.Status.Replicas = *sts.Spec.Replicas
		sts.Status.ReadyReplicas = *sts.Spec.Replicas
		sts.Status.AvailableReplicas = *sts.Spec.Replicas
		sts.Status.CurrentReplicas = *sts.Spec.Replicas
		sts.Status.UpdatedReplicas = *sts.Spec.Replicas
		Expect(k8sClient.Status().Update(ctx, &sts)).To(Succeed())
	}
	for _, name := range jobs {
		job := &batchv1.Job{}
		Eventually(func() error {
			return k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, job)
		}).Should(Succeed(), "init Job %s of release %s", name, release)
		finishJob(job, true)
	}
}
