package controllers

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
	"github.com/streambench/streambench-operator/internal/provision/workers"
	"github.com/streambench/streambench-operator/internal/suite"
)

// The suite's cells are real BenchmarkRuns reconciled by the real run
// controller; as in the run tests, the test plays what envtest does not
// run: the Job controller and the coordinator (finishJob, writeResults),
// the Pulsar chart's StatefulSets and init Jobs becoming ready
// (pulsarReady). Helm installs the real chart from the test's chart server.

func suiteKey(s *v1alpha1.BenchmarkSuite) types.NamespacedName {
	return types.NamespacedName{Namespace: s.Namespace, Name: s.Name}
}

func getSuite(s *v1alpha1.BenchmarkSuite) *v1alpha1.BenchmarkSuite {
	var got v1alpha1.BenchmarkSuite
	ExpectWithOffset(1, k8sClient.Get(ctx, suiteKey(s), &got)).To(Succeed())
	return &got
}

func waitSuitePhase(s *v1alpha1.BenchmarkSuite, phase v1alpha1.Phase) *v1alpha1.BenchmarkSuite {
	var got v1alpha1.BenchmarkSuite
	EventuallyWithOffset(1, func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, suiteKey(s), &got)).To(Succeed())
		g.Expect(got.Status.Phase).To(Equal(phase), "status.message: %s", got.Status.Message)
	}).Should(Succeed())
	return &got
}

// childRuns are the suite's cells that exist as BenchmarkRuns.
func childRuns(s *v1alpha1.BenchmarkSuite) []v1alpha1.BenchmarkRun {
	var runs v1alpha1.BenchmarkRunList
	ExpectWithOffset(1, k8sClient.List(ctx, &runs, client.InNamespace(s.Namespace), client.MatchingLabels{suite.LabelSuite: s.Name})).To(Succeed())
	return runs.Items
}

// playCell waits for the cell's run, checks that no other cell runs beside
// it, and plays its coordinator: results and a succeeded Job, or a failed
// Job. It returns the finished run.
func playCell(s *v1alpha1.BenchmarkSuite, cell string, succeed bool) *v1alpha1.BenchmarkRun {
	run := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: cell}}
	running := waitPhase(run, v1alpha1.PhaseRunning)
	Expect(running.OwnerReferences).To(HaveLen(1))
	Expect(running.OwnerReferences[0].Kind).To(Equal("BenchmarkSuite"))
	Expect(running.Spec.Cluster.Existing).NotTo(BeNil(), "a cell runs in existing mode against the suite's cluster")
	for _, other := range childRuns(s) {
		if other.Name != cell {
			Expect(other.Status.Phase.Finished()).To(BeTrue(), "cell %s runs beside %s", other.Name, cell)
		}
	}
	Expect(getSuite(s).Status.CurrentCell).To(Equal(cell))
	if succeed {
		writeResults(running)
		finishJob(getJob(run, workers.CoordinatorName(run)), true)
		return waitPhase(run, v1alpha1.PhaseSucceeded)
	}
	finishJob(getJob(run, workers.CoordinatorName(run)), false)
	return waitPhase(run, v1alpha1.PhaseFailed)
}

func cellNames(s *v1alpha1.BenchmarkSuite) []string {
	var names []string
	for _, c := range s.Status.Cells {
		names = append(names, c.Name)
	}
	return names
}

func durabilities(levels ...v1alpha1.Level) []v1alpha1.DurabilitySpec {
	var out []v1alpha1.DurabilitySpec
	for _, l := range levels {
		out = append(out, v1alpha1.DurabilitySpec{Level: level(l)})
	}
	return out
}

// existingSuite runs on existing Kafka and Pulsar: nothing is deployed.
func existingSuite(ns, name string, kafkaLevels, pulsarLevels []v1alpha1.Level) *v1alpha1.BenchmarkSuite {
	s := &v1alpha1.BenchmarkSuite{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.BenchmarkSuiteSpec{
			Workloads: []v1alpha1.SuiteWorkload{{Name: "lat", Spec: &v1alpha1.WorkloadSpec{MessageSize: 1024, ProducerRate: 1000}}},
		},
	}
	if kafkaLevels != nil {
		s.Spec.Systems = append(s.Spec.Systems, v1alpha1.SuiteSystem{System: v1alpha1.SystemKafka,
			Cluster:      v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{BootstrapServers: "kafka.example:9092"}},
			Durabilities: durabilities(kafkaLevels...)})
	}
	if pulsarLevels != nil {
		s.Spec.Systems = append(s.Spec.Systems, v1alpha1.SuiteSystem{System: v1alpha1.SystemPulsar,
			Cluster:      v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{ServiceURL: "pulsar://pulsar.example:6650", AdminURL: "http://pulsar.example:8080"}},
			Durabilities: durabilities(pulsarLevels...)})
	}
	return s
}

var _ = Describe("a BenchmarkSuite on existing clusters", func() {
	It("runs its cells one at a time, fills the status table and the results ConfigMap with the study's tables", func() {
		ns := newNamespace()
		s := existingSuite(ns, "matrix", []v1alpha1.Level{1, 2}, []v1alpha1.Level{1, 2})
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		Eventually(func() []string { return cellNames(getSuite(s)) }).Should(Equal([]string{
			"matrix-kafka-l1-lat", "matrix-kafka-l2-lat", "matrix-pulsar-l1-lat", "matrix-pulsar-l2-lat"}))
		Expect(getSuite(s).Status.Progress).To(Equal("0/4"))

		finished := map[string]*v1alpha1.BenchmarkRun{}
		for i, cell := range cellNames(getSuite(s)) {
			finished[cell] = playCell(s, cell, true)
			Expect(finished[cell].Spec.Durability.Level).NotTo(BeNil())
			Eventually(func() string { return getSuite(s).Status.Progress }).Should(Equal(fmt.Sprintf("%d/4", i+1)))
		}
		done := waitSuitePhase(s, v1alpha1.PhaseSucceeded)
		Expect(done.Status.CurrentCell).To(BeEmpty())
		Expect(done.Status.CompletionTime).NotTo(BeNil())
		for _, c := range done.Status.Cells {
			run := finished[c.Name]
			Expect(c.Phase).To(Equal(v1alpha1.CellSucceeded))
			Expect(c.AchievedLevel).To(Equal(run.Status.Durability.AchievedLevel))
			Expect(c.Results).NotTo(BeNil())
			Expect(c.Results.PublishMBPerSec).To(Equal(run.Status.Results.PublishMBPerSec), c.Name)
			Expect(c.Results.PublishP99Ms).To(Equal(run.Status.Results.PublishLatencyMs.P99), c.Name)
			Expect(*c.Results.EndToEndP99Ms).To(Equal(run.Status.Results.EndToEndLatencyMs.P99), c.Name)
		}

		var cm corev1.ConfigMap
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "matrix-results"}, &cm)).To(Succeed())
		Expect(cm.OwnerReferences).To(HaveLen(1))
		for _, c := range done.Status.Cells {
			Expect(cm.Data).To(HaveKey(suite.CellKey(c.Name)))
		}
		tables := cm.Data[suite.KeyTables]
		// One table per achieved level, Kafka beside Pulsar.
		l1 := tables[strings.Index(tables, "achieved durability level 1"):strings.Index(tables, "achieved durability level 2")]
		Expect(l1).To(ContainSubstring("matrix-kafka-l1-lat"))
		Expect(l1).To(ContainSubstring("matrix-pulsar-l1-lat"))
		Expect(l1).NotTo(ContainSubstring("l2-lat"))
		Expect(l1).To(ContainSubstring("Publish latency, ack − send (ms)"))
		Expect(tables).To(ContainSubstring("workload lat, achieved durability level 2"))
		Expect(cm.Data[suite.KeySuite]).To(ContainSubstring(`"comparisons"`))
	})

	It("repeats each cell spec.repeats times, interleaved within its cluster, and compares the cells over their repeats", func() {
		ns := newNamespace()
		s := existingSuite(ns, "rep", []v1alpha1.Level{1, 2}, []v1alpha1.Level{1})
		s.Spec.Repeats = 2
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		want := []string{"rep-kafka-l1-lat-r1", "rep-kafka-l2-lat-r1", "rep-kafka-l2-lat-r2", "rep-kafka-l1-lat-r2",
			"rep-pulsar-l1-lat-r1", "rep-pulsar-l1-lat-r2"}
		Eventually(func() []string { return cellNames(getSuite(s)) }).Should(Equal(want))
		for _, cell := range want {
			playCell(s, cell, true)
		}
		done := waitSuitePhase(s, v1alpha1.PhaseSucceeded)
		Expect(done.Status.Progress).To(Equal("6/6"))
		Expect(done.Status.Cells[3].Repeat).To(Equal(int32(2)))
		Expect(done.Status.Cells[3].RepeatOf).To(Equal("rep-kafka-l1-lat"))
		Expect(done.Status.Cells[3].Results).NotTo(BeNil(), "each repeat keeps its headline")
		var cm corev1.ConfigMap
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "rep-results"}, &cm)).To(Succeed())
		tables := cm.Data[suite.KeyTables]
		// One row per cell (its median over the repeats), and compare's
		// verdict between the cells of a table.
		Expect(tables).To(ContainSubstring("B = rep-pulsar-l1-lat against A = rep-kafka-l1-lat"))
		Expect(tables).NotTo(ContainSubstring("-lat-r"))
	})

	It("records a failed cell and goes on with failurePolicy Continue", func() {
		ns := newNamespace()
		s := existingSuite(ns, "cont", []v1alpha1.Level{1, 2, 4}, nil)
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		Eventually(func() []string { return cellNames(getSuite(s)) }).Should(HaveLen(3))
		cells := cellNames(getSuite(s))
		playCell(s, cells[0], false)
		playCell(s, cells[1], true)
		playCell(s, cells[2], true)
		done := waitSuitePhase(s, v1alpha1.PhaseFailed)
		Expect(done.Status.Progress).To(Equal("3/3"))
		Expect(done.Status.Message).To(ContainSubstring("1 of 3 cells failed: cont-kafka-l1-lat"))
		Expect(done.Status.Cells[0].Phase).To(Equal(v1alpha1.CellFailed))
		Expect(done.Status.Cells[0].Message).To(ContainSubstring("failed"))
		Expect(done.Status.Cells[1].Phase).To(Equal(v1alpha1.CellSucceeded))
		Expect(done.Status.Cells[2].Phase).To(Equal(v1alpha1.CellSucceeded))
	})

	It("stops at the first failed cell with failurePolicy Stop, skips the rest, and goes after its TTL", func() {
		ns := newNamespace()
		s := existingSuite(ns, "stop", []v1alpha1.Level{1, 2, 4}, nil)
		s.Spec.FailurePolicy = v1alpha1.FailureStop
		// 10 s, not less: completionTime is kept to the second, so a short
		// TTL can expire before a poll sees Failed (a 1 s TTL failed CI
		// that way in lifecycle_test.go).
		s.Spec.Teardown.TTLSecondsAfterFinished = ptr.To[int32](10)
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		Eventually(func() []string { return cellNames(getSuite(s)) }).Should(HaveLen(3))
		cells := cellNames(getSuite(s))
		playCell(s, cells[0], false)
		done := waitSuitePhase(s, v1alpha1.PhaseFailed)
		Expect(done.Status.Progress).To(Equal("3/3"))
		Expect(done.Status.Cells[1].Phase).To(Equal(v1alpha1.CellSkipped))
		Expect(done.Status.Cells[2].Phase).To(Equal(v1alpha1.CellSkipped))
		Expect(done.Status.Message).To(ContainSubstring("2 skipped"))
		Expect(childRuns(s)).To(HaveLen(1), "no cell starts after a failure with Stop")
		Eventually(gone(&v1alpha1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: ns}}), "40s").Should(BeTrue())
	})

	It("continues after an operator restart mid-suite without running a cell twice", func() {
		ns := newNamespace()
		s := existingSuite(ns, "restart", []v1alpha1.Level{2}, []v1alpha1.Level{2})
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		Eventually(func() []string { return cellNames(getSuite(s)) }).Should(HaveLen(2))
		cells := cellNames(getSuite(s))
		first := playCell(s, cells[0], true)
		waitPhase(&v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cells[1]}}, v1alpha1.PhaseRunning)
		restartManager()
		playCell(s, cells[1], true)
		done := waitSuitePhase(s, v1alpha1.PhaseSucceeded)
		Expect(done.Status.Progress).To(Equal("2/2"))
		Expect(childRuns(s)).To(HaveLen(2))
		// The first cell was not run again: same object, same results.
		Expect(getRun(first).UID).To(Equal(first.UID))
		Expect(done.Status.Cells[0].Results.PublishMBPerSec).To(Equal(first.Status.Results.PublishMBPerSec))
	})
})

var _ = Describe("a BenchmarkSuite on managed Pulsar", func() {
	It("deploys a cluster once per journal configuration, reuses it for the cells that share it, and tears each down before the next", func() {
		ns := newNamespace()
		s := &v1alpha1.BenchmarkSuite{
			ObjectMeta: metav1.ObjectMeta{Name: "pm", Namespace: ns},
			Spec: v1alpha1.BenchmarkSuiteSpec{
				Systems: []v1alpha1.SuiteSystem{{System: v1alpha1.SystemPulsar,
					Cluster: v1alpha1.ClusterSpec{Managed: &v1alpha1.ManagedCluster{}},
					// Levels 1 and 3 both need journalSyncData=true; 2 does not.
					Durabilities: durabilities(1, 2, 3)}},
				Workloads: []v1alpha1.SuiteWorkload{{Name: "lat", Spec: &v1alpha1.WorkloadSpec{MessageSize: 1024, ProducerRate: 1000}}},
			},
		}
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		Eventually(func() []string { return cellNames(getSuite(s)) }).Should(Equal([]string{"pm-pulsar-l1-lat", "pm-pulsar-l3-lat", "pm-pulsar-l2-lat"}))
		planned := getSuite(s)
		Expect(planned.Status.Clusters).To(HaveLen(2))
		syncRelease := pulsar.ReleaseName(&v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: planned.Status.Clusters[0].Name}})
		asyncRelease := pulsar.ReleaseName(&v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: planned.Status.Clusters[1].Name}})

		bookieConfig := func(release string) *corev1.ConfigMap {
			var cm corev1.ConfigMap
			Eventually(func() error {
				return k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: release + "-bookie-config"}, &cm)
			}).Should(Succeed())
			return &cm
		}
		syncConfig := bookieConfig(syncRelease)
		Expect(syncConfig.Data).To(HaveKeyWithValue("journalSyncData", "true"))
		Consistently(func() []v1alpha1.BenchmarkRun { return childRuns(s) }, "1s").Should(BeEmpty(), "no cell before its cluster is ready")
		pulsarReady(ns, syncRelease, pulsar.StatefulSetNames(syncRelease), pulsar.InitJobNames(syncRelease))

		l1 := playCell(s, "pm-pulsar-l1-lat", true)
		Expect(l1.Spec.Cluster.Existing.ServiceURL).To(Equal(pulsar.ServiceURL(syncRelease, ns)))
		waitPhase(&v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pm-pulsar-l3-lat"}}, v1alpha1.PhaseRunning)
		Expect(bookieConfig(syncRelease).UID).To(Equal(syncConfig.UID), "the cluster was not deployed again")
		var releases corev1.ConfigMapList
		Expect(k8sClient.List(ctx, &releases, client.InNamespace(ns))).To(Succeed())
		for _, cm := range releases.Items {
			Expect(cm.Name).NotTo(HavePrefix(asyncRelease), "the second cluster is not deployed while the first one's cells run")
		}
		l3 := playCell(s, "pm-pulsar-l3-lat", true)
		Expect(l3.Spec.Cluster.Existing.ServiceURL).To(Equal(pulsar.ServiceURL(syncRelease, ns)), "level 3 reuses level 1's cluster")

		// The journal-sync cluster goes before the async one is deployed.
		Eventually(gone(syncConfig)).Should(BeTrue())
		asyncConfig := bookieConfig(asyncRelease)
		Expect(asyncConfig.Data).To(HaveKeyWithValue("journalSyncData", "false"))
		pulsarReady(ns, asyncRelease, pulsar.StatefulSetNames(asyncRelease), pulsar.InitJobNames(asyncRelease))
		l2 := playCell(s, "pm-pulsar-l2-lat", true)
		Expect(l2.Spec.Cluster.Existing.ServiceURL).To(Equal(pulsar.ServiceURL(asyncRelease, ns)))

		done := waitSuitePhase(s, v1alpha1.PhaseSucceeded)
		Eventually(gone(asyncConfig)).Should(BeTrue())
		for _, c := range done.Status.Clusters {
			Expect(c.Phase).To(Equal(v1alpha1.ClusterTornDown), c.Name)
		}
	})
})

var _ = Describe("a BenchmarkSuite deleted mid-suite", func() {
	It("removes the cluster it deployed, whatever its teardown policy, and its cells go with it", func() {
		ns := newNamespace()
		s := &v1alpha1.BenchmarkSuite{
			ObjectMeta: metav1.ObjectMeta{Name: "gone", Namespace: ns},
			Spec: v1alpha1.BenchmarkSuiteSpec{
				Systems: []v1alpha1.SuiteSystem{{System: v1alpha1.SystemPulsar,
					Cluster: v1alpha1.ClusterSpec{Managed: &v1alpha1.ManagedCluster{}}, Durabilities: durabilities(2)}},
				Workloads: []v1alpha1.SuiteWorkload{{Name: "lat", Spec: &v1alpha1.WorkloadSpec{MessageSize: 1024, ProducerRate: 1000}}},
				Teardown:  v1alpha1.TeardownSpec{Policy: v1alpha1.TeardownNever},
			},
		}
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		Eventually(func() []v1alpha1.SuiteCluster { return getSuite(s).Status.Clusters }).Should(HaveLen(1))
		release := pulsar.ReleaseName(&v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: getSuite(s).Status.Clusters[0].Name}})
		var cfg corev1.ConfigMap
		Eventually(func() error {
			return k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: release + "-bookie-config"}, &cfg)
		}).Should(Succeed())
		pulsarReady(ns, release, pulsar.StatefulSetNames(release), pulsar.InitJobNames(release))
		cell := waitPhase(&v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gone-pulsar-l2-lat"}}, v1alpha1.PhaseRunning)

		Expect(k8sClient.Delete(ctx, s)).To(Succeed())
		Eventually(gone(&cfg)).Should(BeTrue(), "the Helm release is uninstalled")
		Eventually(gone(&v1alpha1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: ns}})).Should(BeTrue())
		// envtest runs no garbage collector: the cell's owner reference is
		// what a cluster's collector follows.
		Expect(cell.OwnerReferences[0].Name).To(Equal(s.Name))
		Expect(*cell.OwnerReferences[0].Controller).To(BeTrue())
	})
})

// managedKafka makes the suite's first system a managed Kafka with base
// as its cluster.managed.security and secs as its securities.
func managedKafka(s *v1alpha1.BenchmarkSuite, base *v1alpha1.ManagedSecurity, secs ...v1alpha1.ManagedSecurity) {
	s.Spec.Systems[0].Cluster = v1alpha1.ClusterSpec{Managed: &v1alpha1.ManagedCluster{Brokers: 3, Security: base}}
	s.Spec.Systems[0].Securities = secs
}

var _ = Describe("BenchmarkSuite validation", func() {
	valid := func(ns string) *v1alpha1.BenchmarkSuite {
		return existingSuite(ns, "v", []v1alpha1.Level{2}, nil)
	}
	DescribeTable("refuses a bad spec with a message naming the field",
		func(breakIt func(*v1alpha1.BenchmarkSuite), want string) {
			s := valid(newNamespace())
			breakIt(s)
			err := k8sClient.Create(ctx, s)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("a long name", func(s *v1alpha1.BenchmarkSuite) { s.Name = "a-suite-name-longer-than-20" }, "metadata.name must be at most 20 characters"),
		Entry("a workload both inline and in a ConfigMap", func(s *v1alpha1.BenchmarkSuite) {
			s.Spec.Workloads[0].ConfigMapRef = &v1alpha1.ConfigMapFileRef{Name: "w"}
		}, "set exactly one of spec"),
		Entry("a workload name that is no DNS label", func(s *v1alpha1.BenchmarkSuite) { s.Spec.Workloads[0].Name = "Max_Rate" }, "spec.workloads[0].name"),
		Entry("no durability", func(s *v1alpha1.BenchmarkSuite) { s.Spec.Systems[0].Durabilities = nil }, "durabilities"),
		Entry("a Pulsar address for Kafka", func(s *v1alpha1.BenchmarkSuite) {
			s.Spec.Systems[0].Cluster.Existing.ServiceURL = "pulsar://p:6650"
		}, "serviceURL and adminURL apply to system pulsar only"),
		Entry("fewer Kafka brokers than replicas", func(s *v1alpha1.BenchmarkSuite) {
			s.Spec.Systems[0].Cluster = v1alpha1.ClusterSpec{Managed: &v1alpha1.ManagedCluster{Brokers: 2}}
		}, "spec.systems[].cluster.managed.brokers must be at least the replication factor"),
		Entry("a system twice", func(s *v1alpha1.BenchmarkSuite) { s.Spec.Systems = append(s.Spec.Systems, s.Spec.Systems[0]) }, "Duplicate value"),
		Entry("an unknown failure policy", func(s *v1alpha1.BenchmarkSuite) { s.Spec.FailurePolicy = "Retry" }, "spec.failurePolicy"),
		Entry("more repeats than 20", func(s *v1alpha1.BenchmarkSuite) { s.Spec.Repeats = 21 }, "spec.repeats"),
		// spec.systems[].securities
		Entry("securities on an existing cluster", func(s *v1alpha1.BenchmarkSuite) {
			s.Spec.Systems[0].Securities = []v1alpha1.ManagedSecurity{{}, {TLS: true}}
		}, "spec.systems[].securities applies to a managed cluster only (the suite deploys one per setting); an existing cluster's security is its own: set spec.systems[].cluster.existing.tls and authentication instead, or remove securities"),
		Entry("securities beside cluster.managed.security", func(s *v1alpha1.BenchmarkSuite) {
			managedKafka(s, &v1alpha1.ManagedSecurity{TLS: true}, v1alpha1.ManagedSecurity{})
		}, "spec.systems[].securities and cluster.managed.security both set the brokers' security; list every setting to measure in securities and remove cluster.managed.security"),
		Entry("Pulsar's token for Kafka", func(s *v1alpha1.BenchmarkSuite) {
			managedKafka(s, nil, v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthToken})
		}, "spec.systems[].securities[].authentication: kafka takes scram-sha-512 or tls (a Strimzi KafkaUser); pulsar takes token"),
		Entry("a KafkaUser's SCRAM for Pulsar", func(s *v1alpha1.BenchmarkSuite) {
			s.Spec.Systems[0] = v1alpha1.SuiteSystem{System: v1alpha1.SystemPulsar, Cluster: v1alpha1.ClusterSpec{Managed: &v1alpha1.ManagedCluster{}},
				Durabilities: durabilities(2), Securities: []v1alpha1.ManagedSecurity{{TLS: true, Authentication: v1alpha1.ManagedAuthScramSHA512}}}
		}, "spec.systems[].securities[].authentication: kafka takes scram-sha-512 or tls (a Strimzi KafkaUser); pulsar takes token"),
		Entry("mutual TLS without TLS", func(s *v1alpha1.BenchmarkSuite) {
			managedKafka(s, nil, v1alpha1.ManagedSecurity{Authentication: v1alpha1.ManagedAuthTLS})
		}, "spec.systems[].securities[]: authentication tls is mutual TLS: set tls: true in the same entry"),
		Entry("one setting twice", func(s *v1alpha1.BenchmarkSuite) {
			managedKafka(s, nil, v1alpha1.ManagedSecurity{TLS: true}, v1alpha1.ManagedSecurity{}, v1alpha1.ManagedSecurity{TLS: true})
		}, "spec.systems[].securities lists one setting twice ({} and {tls: false} are the same plaintext, anonymous setting); remove one"),
		Entry("more than four settings", func(s *v1alpha1.BenchmarkSuite) {
			managedKafka(s, nil, v1alpha1.ManagedSecurity{}, v1alpha1.ManagedSecurity{TLS: true}, v1alpha1.ManagedSecurity{Authentication: v1alpha1.ManagedAuthScramSHA512},
				v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthScramSHA512}, v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthTLS})
		}, "spec.systems[0].securities: Too many: 5: must have at most 4 items"),
		Entry("Pulsar's token for a suite's managed Kafka", func(s *v1alpha1.BenchmarkSuite) {
			managedKafka(s, &v1alpha1.ManagedSecurity{Authentication: v1alpha1.ManagedAuthToken})
		}, "spec.systems[].cluster.managed.security.authentication: kafka takes scram-sha-512 or tls (a Strimzi KafkaUser); pulsar takes token"),
	)

	It("accepts every managed setting of each system as securities", func() {
		s := valid(newNamespace())
		managedKafka(s, nil, v1alpha1.ManagedSecurity{}, v1alpha1.ManagedSecurity{TLS: true},
			v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthScramSHA512}, v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthTLS})
		s.Spec.Systems = append(s.Spec.Systems, v1alpha1.SuiteSystem{System: v1alpha1.SystemPulsar, Cluster: v1alpha1.ClusterSpec{Managed: &v1alpha1.ManagedCluster{}},
			Durabilities: durabilities(2), Securities: []v1alpha1.ManagedSecurity{{}, {TLS: true}, {Authentication: v1alpha1.ManagedAuthToken}, {TLS: true, Authentication: v1alpha1.ManagedAuthToken}}})
		// Dry run: the API server's validation, without a suite that
		// would go on to deploy eight clusters.
		Expect(k8sClient.Create(ctx, s, client.DryRunAll)).To(Succeed())
	})

	It("keeps the spec immutable", func() {
		s := valid(newNamespace())
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		// Retried: the controller's own updates conflict with a stale copy.
		Eventually(func() string {
			got := getSuite(s)
			got.Spec.FailurePolicy = v1alpha1.FailureStop
			if err := k8sClient.Update(ctx, got); err != nil {
				return err.Error()
			}
			return "the update was accepted"
		}).Should(ContainSubstring("spec is immutable"))
	})

	It("fails a suite whose workload ConfigMap is missing, naming the field and the fix", func() {
		s := valid(newNamespace())
		s.Spec.Workloads[0] = v1alpha1.SuiteWorkload{Name: "file", ConfigMapRef: &v1alpha1.ConfigMapFileRef{Name: "nope"}}
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		failed := waitSuitePhase(s, v1alpha1.PhaseFailed)
		Expect(failed.Status.Message).To(ContainSubstring("spec.workloads[0].configMapRef.name: ConfigMap nope not found"))
		Expect(childRuns(s)).To(BeEmpty())
	})

	It("reads an OMB workload file from a ConfigMap into status.workloads", func() {
		ns := newNamespace()
		Expect(k8sClient.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "wl", Namespace: ns},
			Data: map[string]string{"w.yaml": "name: omb\ntopics: 1\npartitionsPerTopic: 4\nmessageSize: 100\nsubscriptionsPerTopic: 1\nproducersPerTopic: 1\nconsumerPerSubscription: 1\nproducerRate: 5000\ntestDurationMinutes: 1\n"}})).To(Succeed())
		s := valid(ns)
		s.Spec.Workloads[0] = v1alpha1.SuiteWorkload{Name: "file", ConfigMapRef: &v1alpha1.ConfigMapFileRef{Name: "wl"}}
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		run := waitPhase(&v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "v-kafka-l2-file"}}, v1alpha1.PhaseRunning)
		Expect(run.Spec.Workload.PartitionsPerTopic).To(Equal(int32(4)))
		Expect(run.Spec.Workload.ProducerRate).To(Equal(int64(5000)))
		Expect(getSuite(s).Status.Workloads[0].Spec.MessageSize).To(Equal(int32(100)))
	})
})

// securedKafkaSuiteSpecs run inside the Ordered container that installs
// Strimzi's CRDs (lifecycle_test.go), the test playing Strimzi's cluster
// and User Operators: a suite measuring what security costs on Kafka.
func securedKafkaSuiteSpecs() {
	It("deploys a Kafka per security setting and runs each cell with its cluster's Secrets", func() {
		installStrimziCRDs() // again, so that the spec runs alone too
		ns := newNamespace()
		s := &v1alpha1.BenchmarkSuite{
			ObjectMeta: metav1.ObjectMeta{Name: "sec", Namespace: ns},
			Spec: v1alpha1.BenchmarkSuiteSpec{
				Systems: []v1alpha1.SuiteSystem{{System: v1alpha1.SystemKafka,
					Cluster:      v1alpha1.ClusterSpec{Managed: &v1alpha1.ManagedCluster{Brokers: 3}},
					Durabilities: durabilities(2),
					Securities: []v1alpha1.ManagedSecurity{{}, {TLS: true},
						{TLS: true, Authentication: v1alpha1.ManagedAuthScramSHA512}}}},
				Workloads: []v1alpha1.SuiteWorkload{{Name: "lat", Spec: &v1alpha1.WorkloadSpec{MessageSize: 1024, ProducerRate: 1000}}},
			},
		}
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		Eventually(func() []string { return cellNames(getSuite(s)) }).Should(Equal([]string{
			"sec-kafka-plain-l2-lat", "sec-kafka-tls-l2-lat", "sec-kafka-tls-scram-l2-lat"}))
		planned := getSuite(s)
		Expect(planned.Status.Clusters).To(HaveLen(3))
		for i, want := range []struct {
			name     string
			security v1alpha1.ManagedSecurity
		}{
			{"sec-kafka-plain", v1alpha1.ManagedSecurity{}},
			{"sec-kafka-tls", v1alpha1.ManagedSecurity{TLS: true}},
			{"sec-kafka-tls-scram", v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthScramSHA512}},
		} {
			c := planned.Status.Clusters[i]
			Expect(c.Name).To(Equal(want.name))
			Expect(c.Security).NotTo(BeNil(), c.Name)
			Expect(*c.Security).To(Equal(want.security), c.Name)
			Expect(planned.Status.Cells[i].Security).To(Equal(want.security.Label()))
			Expect(planned.Status.Cells[i].Cluster).To(Equal(c.Name))
		}

		// kafkaReady plays the Strimzi cluster operator for one of the
		// suite's clusters: Ready, with the status listener of the one
		// listener it was asked for, and the cluster CA's Secret.
		kafkaReady := func(cluster string) (*unstructured.Unstructured, string) {
			kafka := kafkaObject(&v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster}})
			Eventually(func() error { return k8sClient.Get(ctx, client.ObjectKeyFromObject(kafka), kafka) }).Should(Succeed())
			Expect(kafka.GetOwnerReferences()).To(HaveLen(1))
			Expect(kafka.GetOwnerReferences()[0].Kind).To(Equal("BenchmarkSuite"))
			listeners, _, _ := unstructured.NestedSlice(kafka.Object, "spec", "kafka", "listeners")
			Expect(listeners).To(HaveLen(1))
			l := listeners[0].(map[string]any)
			bootstrap := fmt.Sprintf("%s-kafka-bootstrap.%s.svc:%d", cluster, ns, l["port"])
			kafka.Object["status"] = map[string]any{
				"observedGeneration": kafka.GetGeneration(),
				"conditions":         []any{map[string]any{"type": "Ready", "status": "True"}},
				"listeners":          []any{map[string]any{"name": l["name"], "bootstrapServers": bootstrap}},
			}
			Expect(k8sClient.Status().Update(ctx, kafka)).To(Succeed())
			secret(ns, cluster+"-cluster-ca-cert", map[string]string{"ca.crt": caPEM})
			return kafka, bootstrap
		}
		running := func(cell string) *v1alpha1.BenchmarkRun {
			return waitPhase(&v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cell}}, v1alpha1.PhaseRunning)
		}

		By("plain: no TLS, no credentials")
		plainKafka, plainBootstrap := kafkaReady("sec-kafka-plain")
		plain := running("sec-kafka-plain-l2-lat")
		Expect(plain.Spec.Cluster.Existing.BootstrapServers).To(Equal(plainBootstrap))
		Expect(plain.Spec.Cluster.Existing.TLS).To(BeNil())
		Expect(plain.Spec.Cluster.Existing.Authentication).To(BeNil())
		Expect(mountedSecretKeys(getJob(plain, workers.CoordinatorName(plain)))).To(BeEmpty())
		playCell(s, plain.Name, true)
		Eventually(gone(plainKafka)).Should(BeTrue(), "one deployed cluster at a time")

		By("tls: the cluster's CA")
		_, tlsBootstrap := kafkaReady("sec-kafka-tls")
		Expect(tlsBootstrap).To(HaveSuffix(":9093"))
		tlsRun := running("sec-kafka-tls-l2-lat")
		Expect(tlsRun.Spec.Cluster.Existing.BootstrapServers).To(Equal(tlsBootstrap))
		Expect(tlsRun.Spec.Cluster.Existing.TLS).To(Equal(&v1alpha1.ClientTLS{CA: &v1alpha1.SecretKeyRef{Name: "sec-kafka-tls-cluster-ca-cert", Key: "ca.crt"}}))
		Expect(tlsRun.Spec.Cluster.Existing.Authentication).To(BeNil())
		Expect(mountedSecretKeys(getJob(tlsRun, workers.CoordinatorName(tlsRun)))).To(ConsistOf("sec-kafka-tls-cluster-ca-cert/ca.crt"))
		playCell(s, tlsRun.Name, true)

		By("tls-scram: the CA and the password of the cluster's KafkaUser, once the User Operator served it")
		user := &unstructured.Unstructured{}
		user.SetGroupVersionKind(strimzi.KafkaUserGVK)
		user.SetNamespace(ns)
		user.SetName("sec-kafka-tls-scram-client")
		Eventually(func() error { return k8sClient.Get(ctx, client.ObjectKeyFromObject(user), user) }).Should(Succeed())
		Expect(user.GetOwnerReferences()[0].Kind).To(Equal("BenchmarkSuite"))
		scramKafka, scramBootstrap := kafkaReady("sec-kafka-tls-scram")
		Consistently(func() []string { return names(childRuns(s)) }, "1s").ShouldNot(ContainElement("sec-kafka-tls-scram-l2-lat"), "no cell before its KafkaUser is served")
		secret(ns, user.GetName(), map[string]string{"password": scramPassword, "sasl.jaas.config": jaasConfig})
		user.Object["status"] = map[string]any{
			"observedGeneration": user.GetGeneration(), "username": user.GetName(), "secret": user.GetName(),
			"conditions": []any{map[string]any{"type": "Ready", "status": "True"}},
		}
		Expect(k8sClient.Status().Update(ctx, user)).To(Succeed())
		scram := running("sec-kafka-tls-scram-l2-lat")
		e := scram.Spec.Cluster.Existing
		Expect(e.BootstrapServers).To(Equal(scramBootstrap))
		Expect(e.TLS).To(Equal(&v1alpha1.ClientTLS{CA: &v1alpha1.SecretKeyRef{Name: "sec-kafka-tls-scram-cluster-ca-cert", Key: "ca.crt"}}))
		Expect(e.Authentication).To(Equal(&v1alpha1.ClientAuthentication{Mechanism: v1alpha1.AuthScramSHA512, Username: "sec-kafka-tls-scram-client",
			Password: &v1alpha1.SecretKeyRef{Name: "sec-kafka-tls-scram-client", Key: "password"}}))
		coordinator := getJob(scram, workers.CoordinatorName(scram))
		Expect(mountedSecretKeys(coordinator)).To(ConsistOf("sec-kafka-tls-scram-cluster-ca-cert/ca.crt", "sec-kafka-tls-scram-client/password"))
		Expect(mountedSecretKeys(getJob(scram, workers.WorkerJobName(scram)))).To(ConsistOf("sec-kafka-tls-scram-cluster-ca-cert/ca.crt", "sec-kafka-tls-scram-client/password"))
		sec := securityArg(coordinator)
		Expect(sec.Mechanism).To(Equal("SCRAM-SHA-512"))
		Expect(sec.Username).To(Equal("sec-kafka-tls-scram-client"))
		Expect(sec.PasswordFile).To(Equal("/etc/streambench/secrets/sec-kafka-tls-scram-client/password"))
		Expect(sec.TLS.CAFile).To(Equal("/etc/streambench/secrets/sec-kafka-tls-scram-cluster-ca-cert/ca.crt"))
		noSecretValues(scram, scramPassword, caPEM, jaasConfig)
		playCell(s, scram.Name, true)

		done := waitSuitePhase(s, v1alpha1.PhaseSucceeded)
		Eventually(gone(scramKafka)).Should(BeTrue())
		Eventually(gone(user)).Should(BeTrue(), "the KafkaUser goes with its cluster")
		var cm corev1.ConfigMap
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "sec-results"}, &cm)).To(Succeed())
		tables := cm.Data[suite.KeyTables]
		Expect(strings.Count(tables, "== workload lat, achieved durability level 2 ==")).To(Equal(1), "the three settings share one table:\n%s", tables)
		Expect(tables).To(MatchRegexp(`sec-kafka-tls-scram-l2-lat\s+kafka\s+l2\s+tls-scram`))
		Expect(done.Status.Cells[2].Security).To(Equal("tls-scram"))
	})
}

func names(runs []v1alpha1.BenchmarkRun) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.Name)
	}
	return out
}
