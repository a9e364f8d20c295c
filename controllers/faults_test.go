package controllers

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/workers"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
)

// writePartialResults plays a coordinator that wrote its results so far
// and was then stopped.
func writePartialResults(run *v1alpha1.BenchmarkRun) *results.Summary {
	start := time.Now().Add(-10 * time.Second)
	rec := stats.NewRecorder("worker-0", stats.PhaseMeasure, start)
	for i := 0; i < 100; i++ {
		sent := start.Add(time.Duration(i) * 10 * time.Millisecond)
		rec.RecordSend(sent, sent, 1024)
		rec.RecordAck(sent, sent, sent.Add(3*time.Millisecond), 1024)
	}
	cm, summary, err := results.BuildConfigMap(results.Input{
		Run: run.Name, Namespace: run.Namespace, Partial: true,
		Owner:     &results.OwnerRef{Name: run.Name, UID: string(run.UID)},
		System:    run.Spec.System,
		Workload:  run.Spec.Workload,
		Snapshots: []stats.Snapshot{rec.Cut(start.Add(time.Second))},
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(results.Write(ctx, k8sClient, cm)).To(Succeed())
	return summary
}

var _ = Describe("faults and bad input", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("keeps the partial results of a run that fails, marked partial", func() {
		run := existingKafkaRun(ns)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		running := waitPhase(run, v1alpha1.PhaseRunning)
		partial := writePartialResults(running)
		failPod(run, workers.RoleWorker, "killed")
		failed := waitPhase(run, v1alpha1.PhaseFailed)
		Expect(failed.Status.Results).NotTo(BeNil(), "the results written so far are kept")
		Expect(failed.Status.Results.Partial).To(BeTrue())
		Expect(failed.Status.Results.Sent).To(Equal(partial.Results.Sent))
		Expect(failed.Status.ResultsRef).To(Equal(workers.ResultsName(run)))
		cond := meta.FindStatusCondition(failed.Status.Conditions, v1alpha1.ConditionResultsRecorded)
		Expect(cond).NotTo(BeNil())
		Expect(cond.Message).To(ContainSubstring("partial results"))
	})

	It("records when it entered each phase, and says its deadline suffices", func() {
		run := existingKafkaRun(ns)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		done := runToSucceeded(run)
		pt := done.Status.PhaseTimes
		Expect(pt).NotTo(BeNil())
		for name, t := range map[string]*metav1.Time{"pending": pt.Pending, "provisioning": pt.Provisioning, "running": pt.Running, "collecting": pt.Collecting, "finished": pt.Finished} {
			Expect(t).NotTo(BeNil(), "status.phaseTimes.%s", name)
		}
		Expect(pt.Running.Time).NotTo(BeTemporally("<", pt.Provisioning.Time))
		Expect(pt.Finished.Time).NotTo(BeTemporally("<", pt.Collecting.Time))
		Expect(done.Status.CompletionTime.Time).To(BeTemporally("==", pt.Finished.Time))
		cond := meta.FindStatusCondition(done.Status.Conditions, v1alpha1.ConditionRunTimeout)
		Expect(cond).NotTo(BeNil())
		Expect(cond.Status).To(Equal(metav1.ConditionTrue))
	})

	It("warns in a condition when spec.timeouts.run is below the workload's estimate", func() {
		run := existingKafkaRun(ns)
		run.Spec.Timeouts.Run = &metav1.Duration{Duration: 2 * time.Minute}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		running := waitPhase(run, v1alpha1.PhaseRunning)
		cond := meta.FindStatusCondition(running.Status.Conditions, v1alpha1.ConditionRunTimeout)
		Expect(cond).NotTo(BeNil())
		Expect(cond.Status).To(Equal(metav1.ConditionFalse))
		Expect(cond.Reason).To(Equal("BelowEstimate"))
		Expect(cond.Message).To(ContainSubstring("spec.timeouts.run (2m0s) is below"))
		Expect(getJob(run, workers.CoordinatorName(run)).Spec.ActiveDeadlineSeconds).To(HaveValue(Equal(int64(120))),
			"the user's deadline is kept")
	})

	It("fails at once, naming it, when an object of its name exists that it did not create, and leaves that object", func() {
		run := existingKafkaRun(ns)
		run.GenerateName, run.Name = "", "clash"
		theirs := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: workers.ServiceName(run), Namespace: ns},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
		}
		Expect(k8sClient.Create(ctx, theirs)).To(Succeed())
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		failed := waitPhase(run, v1alpha1.PhaseFailed)
		Expect(failed.Status.Message).To(ContainSubstring("Service " + ns + "/clash-workers exists already and was not created by this run"))
		By("teardown leaves the user's Service, and deleting the run too")
		Eventually(func() bool {
			return meta.IsStatusConditionTrue(getRun(run).Status.Conditions, v1alpha1.ConditionTornDown)
		}).Should(BeTrue())
		Expect(k8sClient.Delete(ctx, run)).To(Succeed())
		Eventually(gone(run)).Should(BeTrue())
		var still corev1.Service
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: theirs.Name}, &still)).To(Succeed())
		Expect(still.UID).To(Equal(theirs.UID))
		Expect(still.DeletionTimestamp).To(BeNil())
	})

	It("fails a run whose load pod is deleted, naming it", func() {
		run := existingKafkaRun(ns)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		waitPhase(run, v1alpha1.PhaseRunning)
		// A pod with a finalizer stays, terminating, after its deletion, as
		// a real pod does during its grace period.
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: run.Name + "-workers-0-x", Namespace: ns, Finalizers: []string{"streambench.io/test"},
				OwnerReferences: jobControlled(loadJob(run, workers.RoleWorker)),
				Labels:          map[string]string{workers.LabelRun: run.Name, workers.LabelRole: workers.RoleWorker}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "worker", Image: testImage}}},
		}
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		DeferCleanup(func() {
			p := &corev1.Pod{}
			if k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), p) == nil {
				p.Finalizers = nil
				Expect(k8sClient.Update(ctx, p)).To(Succeed())
			}
		})
		Expect(k8sClient.Delete(ctx, pod)).To(Succeed())
		failed := waitPhase(run, v1alpha1.PhaseFailed)
		Expect(failed.Status.Message).To(ContainSubstring("worker pod " + pod.Name + " was deleted while the run was running"))
		Expect(meta.FindStatusCondition(failed.Status.Conditions, v1alpha1.ConditionFailed).Reason).To(Equal("WorkerDeleted"))
	})

	It("creates the run's token Secret, owned by the run, that the load pods read", func() {
		run := existingKafkaRun(ns)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		running := waitPhase(run, v1alpha1.PhaseRunning)
		var secret corev1.Secret
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: workers.TokenName(run)}, &secret)).To(Succeed())
		Expect(secret.Data[workers.TokenKey]).To(HaveLen(64))
		Expect(metav1.IsControlledBy(&secret, running)).To(BeTrue())
	})
})
