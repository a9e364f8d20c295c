package controllers

import (
	"fmt"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
	"github.com/streambench/streambench-operator/internal/provision/workers"
)

func existingKafkaRun(ns string) *v1alpha1.BenchmarkRun {
	run := validRun(ns, v1alpha1.SystemKafka)
	run.Spec.Cluster = v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{BootstrapServers: "kafka.example:9092"}}
	return run
}

func kafkaObject(run *v1alpha1.BenchmarkRun) *unstructured.Unstructured {
	kafka := &unstructured.Unstructured{}
	kafka.SetGroupVersionKind(strimzi.KafkaGVK)
	kafka.SetNamespace(run.Namespace)
	kafka.SetName(strimzi.ClusterName(run))
	return kafka
}

// runToSucceeded plays the coordinator: its Job succeeds after it wrote the
// results; the run must end Succeeded with the results in status.
func runToSucceeded(run *v1alpha1.BenchmarkRun) *v1alpha1.BenchmarkRun {
	running := waitPhase(run, v1alpha1.PhaseRunning)
	summary := writeResults(running)
	finishJob(getJob(run, workers.CoordinatorName(run)), true)
	done := waitPhase(run, v1alpha1.PhaseSucceeded)
	Expect(done.Status.Results).NotTo(BeNil())
	// The outcome step prices the results (internal/cost): beyond that,
	// status.results is what the coordinator wrote.
	got := *done.Status.Results
	Expect(got.Cost).NotTo(BeNil())
	got.Cost = nil
	Expect(got).To(Equal(summary.Results))
	Expect(done.Status.Results.PublishMBPerSec).To(BeNumerically(">", 0))
	Expect(done.Status.Results.PublishLatencyMs.P99).To(BeNumerically(">", 0))
	// kubectl get shows status.display: the same figures, two decimals.
	Expect(done.Status.Display).NotTo(BeNil())
	Expect(done.Status.Display.PublishMBPerSec).To(Equal(strconv.FormatFloat(summary.Results.PublishMBPerSec, 'f', 2, 64)))
	Expect(done.Status.Display.PublishP99Ms).To(Equal(strconv.FormatFloat(summary.Results.PublishLatencyMs.P99, 'f', 2, 64)))
	Expect(done.Status.Display.PublishMBPerSec).To(MatchRegexp(`^\d+\.\d\d$`))
	Expect(done.Status.ResultsRef).To(Equal(run.Name + "-results"))
	Expect(done.Status.CompletionTime).NotTo(BeNil())
	Expect(meta.IsStatusConditionTrue(done.Status.Conditions, v1alpha1.ConditionResultsRecorded)).To(BeTrue())
	return done
}

var _ = Describe("a run against an existing cluster", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("runs Kafka to Succeeded with the given bootstrap, results in status, and tears the workers down", func() {
		run := existingKafkaRun(ns)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		running := waitPhase(run, v1alpha1.PhaseRunning)
		Expect(running.Status.Brokers.BootstrapServers).To(Equal("kafka.example:9092"))
		Expect(running.Status.StartTime).NotTo(BeNil())

		coordinator := getJob(run, workers.CoordinatorName(run))
		Expect(coordinator.OwnerReferences).To(HaveLen(1))
		Expect(coordinator.OwnerReferences[0].UID).To(Equal(running.UID))
		Expect(coordinator.Spec.Template.Spec.Containers[0].Args).To(ContainElements(
			"coordinator", "--system=kafka", "--bootstrap=kafka.example:9092", "--results-configmap="+run.Name+"-results",
			"--existing-cluster"))
		Expect(coordinator.Spec.Template.Spec.Containers[0].Image).To(Equal(testImage))
		workerJob := getJob(run, workers.WorkerJobName(run))
		Expect(*workerJob.Spec.CompletionMode).To(Equal(batchv1.IndexedCompletion))
		var svc corev1.Service
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: workers.ServiceName(run)}, &svc)).To(Succeed())
		Expect(svc.Spec.ClusterIP).To(Equal(corev1.ClusterIPNone))

		runToSucceeded(run)
		// teardown.policy defaults to Always: the workers go, the results stay.
		Eventually(gone(workerJob)).Should(BeTrue())
		Eventually(gone(coordinator)).Should(BeTrue())
		var cm corev1.ConfigMap
		Consistently(func() error {
			return k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: run.Name + "-results"}, &cm)
		}, "1s").Should(Succeed())
		Eventually(func() bool {
			return meta.IsStatusConditionTrue(getRun(run).Status.Conditions, v1alpha1.ConditionTornDown)
		}).Should(BeTrue())
	})

	It("checks spec.thresholds on the final results: Succeeded, with condition ThresholdsMet naming the failed bound and its value", func() {
		run := existingKafkaRun(ns)
		// The played coordinator's publish p99 is 6 ms, nothing lost.
		run.Spec.Thresholds = []v1alpha1.Threshold{
			{Figure: "publishLatencyMs.p99", Max: ptr.To(1.0)},
			{Figure: "lost", Max: ptr.To(0.0)},
			{Figure: "publishMBPerSec", Min: ptr.To(0.001)},
		}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		done := runToSucceeded(run)
		cond := meta.FindStatusCondition(done.Status.Conditions, v1alpha1.ConditionThresholdsMet)
		Expect(cond).NotTo(BeNil())
		Expect(cond.Status).To(Equal(metav1.ConditionFalse))
		Expect(cond.Message).To(HavePrefix("1 of 3 thresholds failed: publishLatencyMs.p99 "))
		Expect(cond.Message).To(ContainSubstring("> max 1"))
		Expect(cond.Message).NotTo(ContainSubstring("lost"))
		Expect(done.Status.Display.Thresholds).To(Equal("failed"))
		Expect(done.Status.Message).To(HaveSuffix("; thresholds 1 failed"))
		Eventually(eventReasons(ns, run.Name)).Should(ContainElement(HavePrefix("Warning/ThresholdsFailed: 1 of 3 thresholds failed")))

		// The same bounds met: True, and every threshold's value said.
		met := existingKafkaRun(ns)
		met.Spec.Thresholds = []v1alpha1.Threshold{{Figure: "publishLatencyMs.p99", Max: ptr.To(100.0)}}
		Expect(k8sClient.Create(ctx, met)).To(Succeed())
		done = runToSucceeded(met)
		cond = meta.FindStatusCondition(done.Status.Conditions, v1alpha1.ConditionThresholdsMet)
		Expect(cond).NotTo(BeNil())
		Expect(cond.Status).To(Equal(metav1.ConditionTrue))
		Expect(cond.Message).To(ContainSubstring("<= max 100"))
		Expect(done.Status.Display.Thresholds).To(Equal("met"))
	})

	It("repeats the workload spec.repeats times: each repeat's headline, the medians in their intervals, the interval in the columns, and a threshold on the interval's bound", func() {
		run := existingKafkaRun(ns)
		run.Spec.Repeats = 3
		// The repeats' publish p99s are about 6, 7 and 8 ms: the median
		// meets a max of 7.5, the interval's upper end does not.
		run.Spec.Thresholds = []v1alpha1.Threshold{
			{Figure: "publishLatencyMs.p99", Max: ptr.To(7.5)},
			{Figure: "publishLatencyMs.p99", Max: ptr.To(7.5), OnConfidenceBound: true},
		}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		running := waitPhase(run, v1alpha1.PhaseRunning)
		coordinator := getJob(run, workers.CoordinatorName(run))
		Expect(coordinator.Spec.Template.Spec.Containers[0].Args).To(ContainElement("--repeats=3"))
		Expect(*coordinator.Spec.ActiveDeadlineSeconds).To(Equal(int64(workers.RunDeadline(run).Seconds())))
		Expect(meta.FindStatusCondition(running.Status.Conditions, v1alpha1.ConditionRunTimeout).Message).To(HavePrefix("each of the run's 3 repeats has a deadline of "))

		summary := writeRepeatedResults(running, running.Status.Durability, 3)
		finishJob(coordinator, true)
		done := waitPhase(run, v1alpha1.PhaseSucceeded)
		got := *done.Status.Results
		Expect(got.Cost).NotTo(BeNil(), "the aggregate is priced")
		got.Cost = nil
		Expect(got).To(Equal(summary.Results))
		Expect(done.Status.Repeats).To(HaveLen(3))
		for i, r := range done.Status.Repeats {
			Expect(r.Index).To(Equal(int32(i + 1)))
			Expect(r.Results).To(Equal(summary.Repeats[i].Results))
		}
		p99 := done.Status.Repeats[1].Results.PublishLatencyMs.P99
		Expect(done.Status.Results.PublishLatencyMs.P99).To(Equal(p99), "the median of the three is the middle repeat's")
		var iv *v1alpha1.FigureInterval
		for i := range done.Status.Intervals {
			if done.Status.Intervals[i].Figure == "publishLatencyMs.p99" {
				iv = &done.Status.Intervals[i]
			}
		}
		Expect(iv).NotTo(BeNil(), "status.intervals %+v", done.Status.Intervals)
		Expect(iv.N).To(Equal(int32(3)))
		Expect(iv.Low).To(Equal(done.Status.Repeats[0].Results.PublishLatencyMs.P99))
		Expect(iv.High).To(Equal(done.Status.Repeats[2].Results.PublishLatencyMs.P99))
		Expect(done.Status.Display.PublishP99Ms).To(Equal(fmt.Sprintf("%.2f (%.2f-%.2f)", p99, iv.Low, iv.High)))
		cond := meta.FindStatusCondition(done.Status.Conditions, v1alpha1.ConditionThresholdsMet)
		Expect(cond).NotTo(BeNil())
		Expect(cond.Status).To(Equal(metav1.ConditionFalse))
		Expect(cond.Message).To(HavePrefix("1 of 2 thresholds failed: "))
	})

	It("reports in status.durability what the coordinator read from the existing brokers", func() {
		run := existingKafkaRun(ns)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		running := waitPhase(run, v1alpha1.PhaseRunning)
		Expect(running.Status.Durability.Verification).To(Equal(v1alpha1.NotVerified))
		Expect(running.Status.Durability.Explanation).To(ContainSubstring("the broker version is not known"))

		// Plays the coordinator, which reads the brokers (the envtest has
		// none; internal/driver/inspect is tested on real ones): the
		// benchmark topic has min.insync.replicas=1, so acks=all is async.
		found := map[string]durability.Setting{
			"min.insync.replicas": {Value: "1", Source: "dynamic cluster-wide broker default"},
			"flush.messages":      {Value: "9223372036854775807", Source: "Kafka's default"},
		}
		broker := map[string]durability.Setting{"min.insync.replicas": {Value: "1", Source: "static broker config"}}
		read := durability.ObserveKafka(*running.Status.Durability, durability.KafkaObservation{
			Brokers: map[int32]map[string]durability.Setting{1: broker, 2: broker, 3: broker},
			Topics:  map[string]map[string]durability.Setting{"sb-topic-0": found}, Replicas: map[string]int{"sb-topic-0": 3},
		})
		writeResultsWith(running, &read)
		finishJob(getJob(run, workers.CoordinatorName(run)), true)
		done := waitPhase(run, v1alpha1.PhaseSucceeded)

		d := done.Status.Durability
		Expect(d.RequestedLevel).To(Equal(v1alpha1.Level2))
		Expect(d.AchievedLevel).To(Equal(v1alpha1.Level4))
		Expect(d.Replication).To(Equal(v1alpha1.ReplicationAsync))
		Expect(d.Kafka.Broker).To(HaveKeyWithValue("min.insync.replicas", "1"))
		Expect(d.Explanation).To(ContainSubstring("Read from the existing cluster"))
		Expect(d.Explanation).To(ContainSubstring("topic sb-topic-0 has min.insync.replicas=1"))
		cond := meta.FindStatusCondition(done.Status.Conditions, v1alpha1.ConditionDurabilityResolved)
		Expect(cond.Reason).To(Equal(v1alpha1.ReasonLevelDowngraded))
		Expect(cond.Message).To(ContainSubstring("durability read from the existing cluster: level 2 requested, level 4 in effect"))
	})

	It("runs Pulsar to Succeeded with the given service and admin URLs", func() {
		run := validRun(ns, v1alpha1.SystemPulsar)
		run.Spec.Cluster = v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{ServiceURL: "pulsar://pulsar.example:6650", AdminURL: "http://pulsar.example:8080"}}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		waitPhase(run, v1alpha1.PhaseRunning)
		Expect(getJob(run, workers.CoordinatorName(run)).Spec.Template.Spec.Containers[0].Args).To(ContainElements(
			"--system=pulsar", "--service-url=pulsar://pulsar.example:6650", "--admin-url=http://pulsar.example:8080"))
		done := runToSucceeded(run)
		Expect(done.Status.Brokers.ServiceURL).To(Equal("pulsar://pulsar.example:6650"))
	})

	It("fails with the reason when a worker pod fails, keeping nothing half-done", func() {
		run := existingKafkaRun(ns)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		waitPhase(run, v1alpha1.PhaseRunning)
		failPod(run, workers.RoleWorker, "cannot reach kafka.example:9092: connection refused")
		failed := waitPhase(run, v1alpha1.PhaseFailed)
		Expect(failed.Status.Message).To(ContainSubstring("worker pod " + run.Name + "-worker-0 failed: container worker exited with code 1 (Error): cannot reach kafka.example:9092"))
		cond := meta.FindStatusCondition(failed.Status.Conditions, v1alpha1.ConditionFailed)
		Expect(cond).NotTo(BeNil())
		Expect(cond.Reason).To(Equal("WorkerFailed"))
	})

	It("fails when the coordinator Job fails", func() {
		run := existingKafkaRun(ns)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		waitPhase(run, v1alpha1.PhaseRunning)
		finishJob(getJob(run, workers.CoordinatorName(run)), false)
		failed := waitPhase(run, v1alpha1.PhaseFailed)
		Expect(failed.Status.Message).To(ContainSubstring("Job " + run.Name + "-coordinator failed: BackoffLimitExceeded"))
	})

	It("fails when a worker pod cannot be scheduled", func() {
		run := existingKafkaRun(ns)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		waitPhase(run, v1alpha1.PhaseRunning)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: run.Name + "-workers-1-x", Namespace: ns, OwnerReferences: jobControlled(loadJob(run, workers.RoleWorker)),
				Labels: map[string]string{workers.LabelRun: run.Name, workers.LabelRole: workers.RoleWorker}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "worker", Image: testImage}}},
		}
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		pod.Status.Phase = corev1.PodPending
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes are available: 3 Insufficient cpu.", LastTransitionTime: metav1.Now()}}
		Expect(k8sClient.Status().Update(ctx, pod)).To(Succeed())
		failed := waitPhase(run, v1alpha1.PhaseFailed)
		Expect(failed.Status.Message).To(ContainSubstring("cannot be scheduled: 0/3 nodes are available: 3 Insufficient cpu."))
	})

	It("fails when the workload passes its run deadline", func() {
		run := existingKafkaRun(ns)
		run.Spec.Timeouts.Run = &metav1.Duration{Duration: time.Second}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		failed := waitPhase(run, v1alpha1.PhaseFailed)
		Expect(failed.Status.Message).To(ContainSubstring("did not finish within its deadline"))
	})

	It("continues a run after the operator restarts mid-run", func() {
		run := existingKafkaRun(ns)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		waitPhase(run, v1alpha1.PhaseRunning)
		restartManager()
		runToSucceeded(run)
	})

	It("stops its Jobs and removes itself when deleted mid-run", func() {
		run := existingKafkaRun(ns)
		run.Spec.Teardown.Policy = v1alpha1.TeardownNever // deletion removes everything whatever the policy
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		waitPhase(run, v1alpha1.PhaseRunning)
		coordinator := getJob(run, workers.CoordinatorName(run))
		workerJob := getJob(run, workers.WorkerJobName(run))
		Expect(k8sClient.Delete(ctx, getRun(run))).To(Succeed())
		Eventually(gone(coordinator)).Should(BeTrue())
		Eventually(gone(workerJob)).Should(BeTrue())
		Eventually(gone(&v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: run.Name, Namespace: ns}})).Should(BeTrue())
	})

	DescribeTable("teardown policy",
		func(policy v1alpha1.TeardownPolicy, succeed bool, wantJobsKept bool) {
			run := existingKafkaRun(ns)
			run.Spec.Teardown.Policy = policy
			Expect(k8sClient.Create(ctx, run)).To(Succeed())
			if succeed {
				runToSucceeded(run)
			} else {
				waitPhase(run, v1alpha1.PhaseRunning)
				finishJob(getJob(run, workers.CoordinatorName(run)), false)
				waitPhase(run, v1alpha1.PhaseFailed)
			}
			workerJob := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: workers.WorkerJobName(run), Namespace: ns}}
			if wantJobsKept {
				Consistently(gone(workerJob), "2s").Should(BeFalse())
				Expect(meta.FindStatusCondition(getRun(run).Status.Conditions, v1alpha1.ConditionTornDown)).To(BeNil())
			} else {
				Eventually(gone(workerJob)).Should(BeTrue())
			}
		},
		Entry("Always removes the workers after a failure", v1alpha1.TeardownAlways, false, false),
		Entry("OnSuccess removes them after a success", v1alpha1.TeardownOnSuccess, true, false),
		Entry("OnSuccess keeps them after a failure for inspection", v1alpha1.TeardownOnSuccess, false, true),
		Entry("Never keeps them after a success", v1alpha1.TeardownNever, true, true),
	)

	It("deletes itself, and its results with it, ttlSecondsAfterFinished after it ended", func() {
		run := existingKafkaRun(ns)
		// Not 1 s: status.completionTime is kept to the second, so a 1 s TTL
		// can end as the run turns Succeeded, before a poll has seen it
		// (CI failed so on a loaded machine).
		run.Spec.Teardown.TTLSecondsAfterFinished = ptr.To[int32](5)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		runToSucceeded(run)
		Eventually(gone(&v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: run.Name, Namespace: ns}})).Should(BeTrue())
	})
})

var _ = Describe("a managed Pulsar run", func() {
	It("installs the chart through Helm with the durability in its values, waits for it, runs, and uninstalls", func() {
		ns := newNamespace()
		run := validRun(ns, v1alpha1.SystemPulsar)
		run.Spec.Durability = &v1alpha1.DurabilitySpec{Level: level(2)}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		waitPhase(run, v1alpha1.PhaseProvisioning)
		release := pulsar.ReleaseName(run)

		// The durability reached the chart's values.
		var bookieConfig corev1.ConfigMap
		Eventually(func() error {
			return k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: release + "-bookie-config"}, &bookieConfig)
		}).Should(Succeed())
		Expect(bookieConfig.Data).To(HaveKeyWithValue("journalSyncData", "false"))

		Consistently(func() v1alpha1.Phase { return getRun(run).Status.Phase }, "2s").Should(Equal(v1alpha1.PhaseProvisioning))
		pulsarReady(ns, release, pulsar.StatefulSetNames(release), pulsar.InitJobNames(release))
		running := waitPhase(run, v1alpha1.PhaseRunning)
		Expect(running.Status.Brokers.ServiceURL).To(Equal(pulsar.ServiceURL(release, ns)))
		Expect(running.Status.Brokers.AdminURL).To(Equal(pulsar.AdminURL(release, ns)))

		runToSucceeded(run)
		// Teardown Always: helm uninstall removes the release's objects.
		Eventually(gone(&bookieConfig)).Should(BeTrue())
		Eventually(func() bool {
			return meta.IsStatusConditionTrue(getRun(run).Status.Conditions, v1alpha1.ConditionTornDown)
		}).Should(BeTrue())
	})
})

// Strimzi's CRDs are installed by the first spec that needs them, and stay
// (the manager's RESTMapper keeps a mapping once found). Ginkgo shuffles the
// top-level containers, and other containers install them too (the queue's,
// the suites', the version's), so this one runs before every other
// (SpecPriority), and the ordered container makes "missing" its first.
var _ = Describe("a managed Kafka run through Strimzi", Ordered, SpecPriority(100), func() {
	It("fails with a message that says Strimzi is not installed", func() {
		ns := newNamespace()
		run := validRun(ns, v1alpha1.SystemKafka)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		failed := waitPhase(run, v1alpha1.PhaseFailed)
		Expect(failed.Status.Message).To(ContainSubstring("Strimzi is not installed"))
	})

	It("deploys Kafka and its node pool, waits for Ready, runs, records and tears down", func() {
		installStrimziCRDs()
		ns := newNamespace()
		run := validRun(ns, v1alpha1.SystemKafka)
		run.Spec.Cluster.Managed.Placement.NodeSelector = map[string]string{"node-pool": "kafka"}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		waitPhase(run, v1alpha1.PhaseProvisioning)

		kafka := kafkaObject(run)
		Eventually(func() error { return k8sClient.Get(ctx, client.ObjectKeyFromObject(kafka), kafka) }).Should(Succeed())
		config, _, err := unstructured.NestedStringMap(kafka.Object, "spec", "kafka", "config")
		Expect(err).NotTo(HaveOccurred())
		Expect(config).To(HaveKeyWithValue("min.insync.replicas", "2"), "the durability reached the broker config")
		Expect(kafka.GetOwnerReferences()).To(HaveLen(1))
		pool := &unstructured.Unstructured{}
		pool.SetGroupVersionKind(strimzi.KafkaNodePoolGVK)
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: strimzi.PoolName(run)}, pool)).To(Succeed())
		Expect(pool.GetLabels()).To(HaveKeyWithValue("strimzi.io/cluster", strimzi.ClusterName(run)))
		Expect(pool.GetName()).To(HavePrefix(strimzi.PoolRole+"-"), "the pool is named by its role, so pods read <cluster>-broker-<hash>-<id>")

		Consistently(func() v1alpha1.Phase { return getRun(run).Status.Phase }, "2s").Should(Equal(v1alpha1.PhaseProvisioning))
		bootstrap := strimziReady(run)
		running := waitPhase(run, v1alpha1.PhaseRunning)
		Expect(running.Status.Brokers.BootstrapServers).To(Equal(bootstrap))
		Expect(meta.IsStatusConditionTrue(running.Status.Conditions, v1alpha1.ConditionBrokersReady)).To(BeTrue())

		runToSucceeded(run)
		Eventually(gone(kafka)).Should(BeTrue())
		Eventually(gone(pool)).Should(BeTrue())
	})

	It("uses the bootstrap of a named existing Strimzi cluster", func() {
		ns := newNamespace()
		owner := validRun(ns, v1alpha1.SystemKafka)
		owner.Name, owner.GenerateName = "other", ""
		kafka := kafkaObject(owner)
		// A plaintext, anonymous run takes the listener without TLS or
		// authentication (the TLS one, listed first, does not fit).
		kafka.Object["spec"] = map[string]any{"kafka": map[string]any{"listeners": []any{
			listener(9093, true, ""),
			map[string]any{"name": "plain", "port": int64(9092), "type": "internal", "tls": false},
		}}}
		Expect(k8sClient.Create(ctx, kafka)).To(Succeed())
		bootstrap := strimziReady(owner)

		run := validRun(ns, v1alpha1.SystemKafka)
		run.Spec.Cluster = v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{StrimziCluster: &v1alpha1.StrimziClusterRef{Name: kafka.GetName()}}}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		running := waitPhase(run, v1alpha1.PhaseRunning)
		Expect(running.Status.Brokers.BootstrapServers).To(Equal(bootstrap))
	})

	// TLS and authentication against a named Strimzi cluster
	// (security_test.go), here where Strimzi's CRDs are installed.
	securedStrimziSpecs()

	// spec.cluster.managed.security (brokers_strimzi_test.go).
	securedManagedKafkaSpecs()

	// A suite's spec.systems[].securities (suite_lifecycle_test.go).
	securedKafkaSuiteSpecs()

	// The Kafka version, read from the installed Strimzi
	// (brokers_strimzi_version_test.go).
	kafkaVersionSpecs()

	// Broker pods told from look-alikes by their StrimziPodSet
	// (testbed_java_test.go).
	lookalikeStrimziBrokerSpecs()

	It("gives two runs in one namespace a node pool each, both named by role, so their pods read <cluster>-broker-<hash>-<id>", func() {
		ns := newNamespace()
		var pools []string
		for _, name := range []string{"run-a", "run-b"} {
			run := validRun(ns, v1alpha1.SystemKafka)
			run.Name = name
			Expect(k8sClient.Create(ctx, run)).To(Succeed())
			waitPhase(run, v1alpha1.PhaseProvisioning)
			pool := &unstructured.Unstructured{}
			pool.SetGroupVersionKind(strimzi.KafkaNodePoolGVK)
			Eventually(func() error {
				return k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: strimzi.PoolName(run)}, pool)
			}).Should(Succeed())
			Expect(pool.GetLabels()).To(HaveKeyWithValue("strimzi.io/cluster", strimzi.ClusterName(run)))
			Expect(metav1.IsControlledBy(pool, getRun(run))).To(BeTrue(), "%s's pool is its own", name)
			pools = append(pools, pool.GetName())
		}
		Expect(pools).To(Equal([]string{"broker-66b1eb", "broker-522180"}))
	})

	It("says which broker pods cannot be scheduled, and why, while it waits", func() {
		ns := newNamespace()
		run := validRun(ns, v1alpha1.SystemKafka)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		waitPhase(run, v1alpha1.PhaseProvisioning)
		// What Strimzi would create for a second broker on a one-node pool,
		// as the scheduler leaves it (no scheduler runs in envtest).
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: strimzi.PodSetName(run) + "-1", Namespace: ns, Labels: strimzi.BrokerPodLabels(strimzi.ClusterName(run))},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "kafka", Image: testImage}}},
		}
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		pod.Status.Phase = corev1.PodPending
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable, Message: "0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules.", LastTransitionTime: metav1.Now()}}
		Expect(k8sClient.Status().Update(ctx, pod)).To(Succeed())
		Eventually(func() string { return getRun(run).Status.Message }).Should(And(
			ContainSubstring(pod.Name+": 0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules."),
			ContainSubstring("every broker needs a node of its own")))
	})

	It("fails when the brokers are not ready within spec.timeouts.provisioning", func() {
		ns := newNamespace()
		run := validRun(ns, v1alpha1.SystemKafka)
		run.Spec.Timeouts.Provisioning = &metav1.Duration{Duration: 2 * time.Second}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		failed := waitPhase(run, v1alpha1.PhaseFailed)
		Expect(failed.Status.Message).To(ContainSubstring("the brokers were not ready within spec.timeouts.provisioning (2s)"))
		Expect(meta.FindStatusCondition(failed.Status.Conditions, v1alpha1.ConditionFailed).Reason).To(Equal("ProvisioningTimeout"))
		// Teardown Always removes the Kafka it had deployed.
		Eventually(gone(kafkaObject(run))).Should(BeTrue())
	})

	// Here rather than in suite_lifecycle_test.go: this container installs
	// Strimzi's CRDs, and the first spec above needs them absent.
	It("deploys one Kafka for every level of a suite, owned by the suite, runs the cells against it and removes it", func() {
		ns := newNamespace()
		s := &v1alpha1.BenchmarkSuite{
			ObjectMeta: metav1.ObjectMeta{Name: "km", Namespace: ns},
			Spec: v1alpha1.BenchmarkSuiteSpec{
				Systems: []v1alpha1.SuiteSystem{{System: v1alpha1.SystemKafka,
					Cluster: v1alpha1.ClusterSpec{Managed: &v1alpha1.ManagedCluster{}}, Durabilities: durabilities(1, 2, 4)}},
				Workloads: []v1alpha1.SuiteWorkload{{Name: "lat", Spec: &v1alpha1.WorkloadSpec{MessageSize: 1024, ProducerRate: 1000}}},
			},
		}
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		host := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "km-kafka", Namespace: ns}}
		kafka := kafkaObject(host)
		Eventually(func() error { return k8sClient.Get(ctx, client.ObjectKeyFromObject(kafka), kafka) }).Should(Succeed())
		Expect(kafka.GetOwnerReferences()).To(HaveLen(1))
		Expect(kafka.GetOwnerReferences()[0].Kind).To(Equal("BenchmarkSuite"))
		config, _, err := unstructured.NestedStringMap(kafka.Object, "spec", "kafka", "config")
		Expect(err).NotTo(HaveOccurred())
		// Level 1's flush.messages=1 is the cell's topic setting; broker-wide
		// it would give level 1 to the level-2 and level-4 cells too.
		Expect(config).NotTo(HaveKey("log.flush.interval.messages"))
		bootstrap := strimziReady(host)

		for _, cell := range []string{"km-kafka-l1-lat", "km-kafka-l2-lat", "km-kafka-l4-lat"} {
			waitPhase(&v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: cell, Namespace: ns}}, v1alpha1.PhaseRunning)
			var kafkas unstructured.UnstructuredList
			kafkas.SetGroupVersionKind(strimzi.KafkaGVK)
			Expect(k8sClient.List(ctx, &kafkas, client.InNamespace(ns))).To(Succeed())
			Expect(kafkas.Items).To(HaveLen(1), "one Kafka for every level")
			Expect(kafkas.Items[0].GetUID()).To(Equal(kafka.GetUID()), "not deployed again")
			run := playCell(s, cell, true)
			Expect(run.Spec.Cluster.Existing.BootstrapServers).To(Equal(bootstrap))
		}
		done := waitSuitePhase(s, v1alpha1.PhaseSucceeded)
		Expect(done.Status.Cells[0].AchievedLevel).To(Equal(v1alpha1.Level1))
		Eventually(gone(kafka)).Should(BeTrue())
	})

	It("fails a suite cluster that is not ready in time, records its cells and goes on to the next system", func() {
		ns := newNamespace()
		s := &v1alpha1.BenchmarkSuite{
			ObjectMeta: metav1.ObjectMeta{Name: "kt", Namespace: ns},
			Spec: v1alpha1.BenchmarkSuiteSpec{
				Systems: []v1alpha1.SuiteSystem{
					{System: v1alpha1.SystemKafka, Cluster: v1alpha1.ClusterSpec{Managed: &v1alpha1.ManagedCluster{}}, Durabilities: durabilities(2)},
					{System: v1alpha1.SystemPulsar, Cluster: v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{ServiceURL: "pulsar://p:6650", AdminURL: "http://p:8080"}}, Durabilities: durabilities(2)},
				},
				Workloads: []v1alpha1.SuiteWorkload{{Name: "lat", Spec: &v1alpha1.WorkloadSpec{MessageSize: 1024, ProducerRate: 1000}}},
				Timeouts:  v1alpha1.TimeoutsSpec{Provisioning: &metav1.Duration{Duration: 2 * time.Second}},
			},
		}
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		playCell(s, "kt-pulsar-l2-lat", true)
		done := waitSuitePhase(s, v1alpha1.PhaseFailed)
		// Teardown Always removes what the failed deploy left; the reason stays.
		Expect(done.Status.Clusters[0].Phase).To(Equal(v1alpha1.ClusterTornDown))
		Expect(done.Status.Clusters[0].Message).To(ContainSubstring("removed after it failed: not ready within spec.timeouts.provisioning (2s)"))
		Eventually(gone(kafkaObject(&v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "kt-kafka", Namespace: ns}}))).Should(BeTrue())
		Expect(done.Status.Cells[0].Message).To(ContainSubstring("not ready within spec.timeouts.provisioning (2s)"))
		Expect(done.Status.Cells[1].Phase).To(Equal(v1alpha1.CellSucceeded))
		Expect(done.Status.Message).To(ContainSubstring("1 of 2 cells failed: kt-kafka-l2-lat"))
	})
})
