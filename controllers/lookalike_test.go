package controllers

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/workers"
)

// Issue 58: a running run reads its state from its own Jobs and their
// pods, by controller, never from look-alikes with the same labels and
// names of the same pattern (the testbed's are in testbed_java_test.go).
var _ = Describe("a running run, among look-alikes", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	loadLabels := func(run *v1alpha1.BenchmarkRun, role string) map[string]string {
		return map[string]string{workers.LabelRun: run.Name, workers.LabelRole: role}
	}

	It("is not failed by a failed look-alike of a worker pod, and still by a failed pod of its worker Job", func() {
		run := existingKafkaRun(ns)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		waitPhase(run, v1alpha1.PhaseRunning)
		lookalikePod(ns, run.Name+"-workers-0-fake", defaultNode, testImage, loadLabels(run, workers.RoleWorker), corev1.PodFailed, "")
		Consistently(func() v1alpha1.Phase { return getRun(run).Status.Phase }, "2s").Should(Equal(v1alpha1.PhaseRunning))

		failPod(run, workers.RoleWorker, "cannot reach kafka.example:9092: connection refused")
		failed := waitPhase(run, v1alpha1.PhaseFailed)
		Expect(failed.Status.Message).To(ContainSubstring("worker pod " + run.Name + "-worker-0 failed"))
		Expect(failed.Status.Message).NotTo(ContainSubstring("-fake"))
	})

	It("records where its workers ran from the pods of its Jobs, not from look-alikes", func() {
		run := existingKafkaRun(ns)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		waitPhase(run, v1alpha1.PhaseRunning)
		lookalikePod(ns, run.Name+"-coordinator-fake", "node-fake", testImage, loadLabels(run, workers.RoleCoord), corev1.PodRunning, "")
		for _, n := range []string{"0", "1"} {
			lookalikePod(ns, run.Name+"-workers-"+n+"-fake", "node-fake", testImage, loadLabels(run, workers.RoleWorker), corev1.PodRunning, "")
		}
		Consistently(func() *v1alpha1.WorkerPlacement { return getRun(run).Status.Testbed.Workers }, "2s").Should(BeNil(),
			"no placement from pods the run's Jobs did not make")

		loadPod(run, run.Name+"-coordinator-x", workers.RoleCoord, defaultNode)
		loadPod(run, run.Name+"-workers-0", workers.RoleWorker, defaultNode)
		loadPod(run, run.Name+"-workers-1", workers.RoleWorker, defaultNode)
		var placed *v1alpha1.WorkerPlacement
		Eventually(func() *v1alpha1.WorkerPlacement {
			placed = getRun(run).Status.Testbed.Workers
			return placed
		}, 10*time.Second).ShouldNot(BeNil())
		Expect(placed.Pods).To(HaveLen(3))
		for _, p := range placed.Pods {
			Expect(p.Node).To(Equal(defaultNode), "pod %s", p.Pod)
		}
	})

	It("takes back the coordinator's token once the coordinator Job's pods are gone, whatever look-alike coordinator pod stays", func() {
		run := existingKafkaRun(ns)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		running := waitPhase(run, v1alpha1.PhaseRunning)
		lookalikePod(ns, run.Name+"-coordinator-fake", defaultNode, testImage, loadLabels(run, workers.RoleCoord), corev1.PodRunning, "")
		writeResults(running)
		finishJob(getJob(run, workers.CoordinatorName(run)), true)
		waitPhase(run, v1alpha1.PhaseSucceeded)
		token := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: workers.TokenName(run)}}
		Eventually(gone(token)).Should(BeTrue(), "the look-alike does not keep the token and the coordinator's Role")
	})

	It("fails when its coordinator Job is no longer controlled by it, rather than taking that Job's Complete as its own", func() {
		run := existingKafkaRun(ns)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		waitPhase(run, v1alpha1.PhaseRunning)
		// Settled in Running: a reconcile of the Provisioning run that the
		// cache still held would meet the Job in startWorkers (createOwned),
		// which refuses it too, with another reason.
		Consistently(func() v1alpha1.Phase { return getRun(run).Status.Phase }, "1s").Should(Equal(v1alpha1.PhaseRunning))
		job := getJob(run, workers.CoordinatorName(run))
		job.OwnerReferences = nil
		Expect(k8sClient.Update(ctx, job)).To(Succeed())
		finishJob(job, true)

		failed := waitPhase(run, v1alpha1.PhaseFailed)
		Expect(meta.FindStatusCondition(failed.Status.Conditions, v1alpha1.ConditionFailed).Reason).To(Equal("JobReplaced"))
		Expect(failed.Status.Message).To(Equal("Job " + job.Name + " is no longer controlled by this run (it has no controller): it was replaced or taken over while the run was running, " +
			"and the run cannot tell from it how its workload went; streambench neither uses nor deletes it"))
		_, collected := failed.Status.EnteredAt(v1alpha1.PhaseCollecting)
		Expect(collected).To(BeFalse())
	})
})

var _ = Describe("a BenchmarkSuite, among look-alikes", func() {
	It("fails a cell whose run name someone else's BenchmarkRun holds, never taking that run's results as the cell's", func() {
		ns := newNamespace()
		// Made before the suite, with the name its first cell gets, and
		// finished with results of its own.
		theirs := existingKafkaRun(ns)
		theirs.GenerateName, theirs.Name = "", "pre-kafka-l1-lat"
		theirs.Spec.Workload.ProducerRate = 5
		Expect(k8sClient.Create(ctx, theirs)).To(Succeed())
		runToSucceeded(theirs)

		s := existingSuite(ns, "pre", []v1alpha1.Level{1}, nil)
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		var cell v1alpha1.SuiteCell
		Eventually(func(g Gomega) {
			cells := getSuite(s).Status.Cells
			g.Expect(cells).To(HaveLen(1))
			cell = cells[0]
			g.Expect(cell.Phase).To(Equal(v1alpha1.CellFailed))
		}).Should(Succeed())
		Expect(cell.Name).To(Equal(theirs.Name))
		Expect(cell.Message).To(Equal("BenchmarkRun pre-kafka-l1-lat exists and was not created by this suite (it has no controller); " +
			"streambench neither uses nor deletes it: delete it, or create the suite under another name"))
		Expect(cell.Results).To(BeNil(), "not the other run's results")
		Expect(getRun(theirs).DeletionTimestamp).To(BeNil(), "someone else's run is left alone")
	})
})
