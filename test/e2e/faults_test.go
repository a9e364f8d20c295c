//go:build e2e

package e2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/provision/workers"
	"github.com/streambench/streambench-operator/internal/results"
)

// Faults a long run meets in a real cluster: a pod deleted or evicted, the
// operator restarted (its own container, below), the brokers gone, a namespace that enforces the Pod
// Security Standard "restricted". Each must end the run with the reason and
// keep what was measured, or not disturb it at all.
var _ = Describe("faults during a run", Ordered, func() {
	var kafka *localbrokers.Kafka

	BeforeAll(func(ctx SpecContext) { kafka = startHostKafka(ctx) }, NodeTimeout(6*time.Minute))

	// longRun runs far longer than any test waits: the fault, not its end,
	// stops it.
	longRun := func(ctx context.Context, prefix string) *v1alpha1.BenchmarkRun {
		run := newRun(prefix, v1alpha1.SystemKafka, v1alpha1.ExistingCluster{BootstrapServers: kafka.Bootstrap()}, 10)
		Expect(k8s.Create(ctx, run)).To(Succeed())
		waitForPhase(ctx, run, v1alpha1.PhaseRunning, 5*time.Minute)
		return run
	}

	// waitForPartialResults waits until the coordinator has written its
	// results so far (every snapshot interval) into the results ConfigMap.
	waitForPartialResults := func(ctx context.Context, run *v1alpha1.BenchmarkRun) {
		By("waiting for the coordinator's first periodic write of its results")
		// 6 minutes bound a hang only: pods that start, a 15 s warm-up and a
		// first interval, on a node that other specs share (a cold CI run
		// once took over 3 minutes).
		Eventually(func(g Gomega) {
			var cm corev1.ConfigMap
			g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: run.Namespace, Name: workers.ResultsName(run)}, &cm)).To(Succeed())
			sum, err := results.Read(&cm)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(sum.Results.Partial).To(BeTrue(), "a write while the run is in progress is marked partial")
			g.Expect(sum.Results.Sent).To(BeNumerically(">", 0), "the measured phase has begun")
		}).WithTimeout(6*time.Minute).WithPolling(2*time.Second).Should(Succeed(), func() string { return runLogs(run) })
	}

	podOf := func(ctx context.Context, run *v1alpha1.BenchmarkRun, role string) corev1.Pod {
		var pods corev1.PodList
		Expect(k8s.List(ctx, &pods, client.InNamespace(run.Namespace),
			client.MatchingLabels{workers.LabelRun: run.Name, workers.LabelRole: role})).To(Succeed())
		Expect(pods.Items).NotTo(BeEmpty(), "%s pods of %s", role, run.Name)
		return pods.Items[0]
	}

	failedCondition := func(run *v1alpha1.BenchmarkRun) *metav1.Condition {
		for i := range run.Status.Conditions {
			if c := &run.Status.Conditions[i]; c.Type == v1alpha1.ConditionFailed {
				return c
			}
		}
		return nil
	}

	It("keeps the partial results of a run whose coordinator pod is deleted", func(ctx SpecContext) {
		run := longRun(ctx, "e2e-coord-deleted")
		waitForPartialResults(ctx, run)
		pod := podOf(ctx, run, workers.RoleCoord)
		By("deleting the coordinator pod " + pod.Name)
		deleted := time.Now()
		Expect(k8s.Delete(ctx, &pod)).To(Succeed())
		got := waitForPhase(ctx, run, v1alpha1.PhaseFailed, 2*time.Minute)
		By("the coordinator's final write on SIGTERM, within its grace period")
		Eventually(func(g Gomega) {
			var cm corev1.ConfigMap
			g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: run.Namespace, Name: workers.ResultsName(run)}, &cm)).To(Succeed())
			sum, err := results.Read(&cm)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(sum.Notes).To(ContainElement(ContainSubstring("the run failed")), "the final write records why the run ended")
		}).WithTimeout(workers.CoordinatorGrace).WithPolling(time.Second).Should(Succeed())
		// A figure for the grace period's comment, not an assertion.
		GinkgoWriter.Printf("SIGTERM to final results write (cleanup included): %s\n", time.Since(deleted).Round(100*time.Millisecond))
		Expect(failedCondition(got)).NotTo(BeNil())
		Expect(failedCondition(got).Reason).To(Equal("CoordinatorDeleted"))
		Expect(got.Status.Message).To(ContainSubstring(pod.Name))
		Expect(got.Status.Results).NotTo(BeNil(), "the results written so far are kept")
		Expect(got.Status.Results.Partial).To(BeTrue())
		Expect(got.Status.Results.Sent).To(BeNumerically(">", 0))
		Expect(got.Status.ResultsRef).To(Equal(workers.ResultsName(run)))
		GinkgoWriter.Printf("coordinator deleted: %s; partial results: sent %d, %.3f MB/s\n", got.Status.Message, got.Status.Results.Sent, got.Status.Results.PublishMBPerSec)
		Expect(k8s.Delete(ctx, run)).To(Succeed())
	}, SpecTimeout(14*time.Minute))

	It("fails a run within 60 s of a worker pod's deletion, naming the pod", func(ctx SpecContext) {
		run := longRun(ctx, "e2e-worker-deleted")
		waitForPartialResults(ctx, run)
		pod := podOf(ctx, run, workers.RoleWorker)
		By("deleting the worker pod " + pod.Name)
		Expect(k8s.Delete(ctx, &pod)).To(Succeed())
		got := waitForPhase(ctx, run, v1alpha1.PhaseFailed, 60*time.Second)
		Expect(failedCondition(got).Reason).To(Equal("WorkerDeleted"))
		Expect(got.Status.Message).To(ContainSubstring(pod.Name))
		Expect(got.Status.Results).NotTo(BeNil(), "the results written so far are kept")
		Expect(got.Status.Results.Partial).To(BeTrue())
		GinkgoWriter.Printf("worker deleted: %s\n", got.Status.Message)
		Expect(k8s.Delete(ctx, run)).To(Succeed())
	}, SpecTimeout(14*time.Minute))

	It("runs to Succeeded in a namespace that enforces Pod Security restricted", func(ctx SpecContext) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "streambench-restricted-", Labels: map[string]string{
			"pod-security.kubernetes.io/enforce":         "restricted",
			"pod-security.kubernetes.io/enforce-version": "latest",
		}}}
		Expect(k8s.Create(ctx, ns)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			_ = k8s.DeleteAllOf(ctx, &v1alpha1.BenchmarkRun{}, client.InNamespace(ns.Name))
			Eventually(func(g Gomega) {
				var runs v1alpha1.BenchmarkRunList
				g.Expect(k8s.List(ctx, &runs, client.InNamespace(ns.Name))).To(Succeed())
				g.Expect(runs.Items).To(BeEmpty())
			}).WithTimeout(2 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
			Expect(k8s.Delete(ctx, ns)).To(Succeed())
		}, NodeTimeout(3*time.Minute))
		run := newRun("e2e-restricted", v1alpha1.SystemKafka, v1alpha1.ExistingCluster{BootstrapServers: kafka.Bootstrap()}, 0.5)
		run.Namespace = ns.Name
		Expect(k8s.Create(ctx, run)).To(Succeed())
		got := waitForPhaseIn(ctx, run, v1alpha1.PhaseSucceeded, runTimeout)
		Expect(got.Status.Results).NotTo(BeNil())
		Expect(got.Status.Results.Partial).To(BeFalse())
		Expect(got.Status.Results.Lost).To(BeZero())
	}, SpecTimeout(runTimeout+4*time.Minute))

	// Last: it stops the brokers the specs above use.
	It("fails a run whose brokers stop, with the reason, keeping the results so far", func(ctx SpecContext) {
		run := newRun("e2e-brokers-stop", v1alpha1.SystemKafka, v1alpha1.ExistingCluster{BootstrapServers: kafka.Bootstrap()}, 1)
		Expect(k8s.Create(ctx, run)).To(Succeed())
		waitForPhase(ctx, run, v1alpha1.PhaseRunning, 5*time.Minute)
		waitForPartialResults(ctx, run)
		By("stopping the Kafka brokers mid-run")
		Expect(kafka.Stop()).To(Succeed())
		got := waitForPhase(ctx, run, v1alpha1.PhaseFailed, 8*time.Minute)
		Expect(failedCondition(got)).NotTo(BeNil())
		Expect(got.Status.Message).NotTo(BeEmpty())
		Expect(got.Status.Results).NotTo(BeNil(), "the results so far are kept")
		Expect(got.Status.Results.Partial).To(BeTrue())
		Expect(got.Status.Results.Sent).To(BeNumerically(">", 0))
		GinkgoWriter.Printf("brokers stopped: reason %s: %s\n", failedCondition(got).Reason, got.Status.Message)
	}, SpecTimeout(20*time.Minute))
})

// The operator is the one thing every spec shares: its restart runs alone
// (Serial: after the parallel specs, on one process), so no other run
// meets a restart it did not ask for, and no time bound of another spec
// (a worker's deletion failing its run within 60 s) covers one.
var _ = Describe("an operator restart during a run", Serial, Ordered, func() {
	var kafka *localbrokers.Kafka

	BeforeAll(func(ctx SpecContext) { kafka = startHostKafka(ctx) }, NodeTimeout(6*time.Minute))

	It("finishes a run while the operator restarts", func(ctx SpecContext) {
		run := newRun("e2e-operator-restart", v1alpha1.SystemKafka, v1alpha1.ExistingCluster{BootstrapServers: kafka.Bootstrap()}, 0.75)
		Expect(k8s.Create(ctx, run)).To(Succeed())
		waitForPhase(ctx, run, v1alpha1.PhaseRunning, 3*time.Minute)
		By("deleting the operator's pods mid-run")
		var pods corev1.PodList
		Expect(k8s.List(ctx, &pods, client.InNamespace(operatorNamespace), client.MatchingLabels{"app.kubernetes.io/component": "manager"})).To(Succeed())
		Expect(pods.Items).NotTo(BeEmpty())
		for i := range pods.Items {
			Expect(k8s.Delete(ctx, &pods.Items[i])).To(Succeed())
		}
		waitForManager()
		got := waitForPhase(ctx, run, v1alpha1.PhaseSucceeded, runTimeout)
		expectResults(ctx, got, v1alpha1.SystemKafka)
		Expect(got.Status.Results.Partial).To(BeFalse())
		_, ranSince := got.Status.EnteredAt(v1alpha1.PhaseRunning)
		Expect(ranSince).To(BeTrue(), "status.phaseTimes.running is kept across the restart")
	}, SpecTimeout(runTimeout+3*time.Minute))
})

// waitForPhaseIn is waitForPhase for a run outside the test namespace.
func waitForPhaseIn(ctx context.Context, run *v1alpha1.BenchmarkRun, want v1alpha1.Phase, timeout time.Duration) *v1alpha1.BenchmarkRun {
	var got v1alpha1.BenchmarkRun
	EventuallyWithOffset(1, func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(run), &got)).To(Succeed())
		if got.Status.Phase.Finished() && got.Status.Phase != want {
			StopTrying("run " + got.Name + " ended " + string(got.Status.Phase) + ": " + got.Status.Message + "\npods: " + podSummary(run.Namespace)).Now()
		}
		g.Expect(got.Status.Phase).To(Equal(want), "run %s is %s: %s", got.Name, got.Status.Phase, got.Status.Message)
	}).WithTimeout(timeout).WithPolling(2 * time.Second).Should(Succeed())
	return &got
}
