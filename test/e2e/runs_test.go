//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	kafkadriver "github.com/streambench/streambench-operator/internal/driver/kafka"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/provision/workers"
	"github.com/streambench/streambench-operator/internal/results"
)

func logf(format string, args ...any) { GinkgoWriter.Printf(format+"\n", args...) }

// runTimeout bounds one short run: pods start, a 15 s warm-up and a 30 s
// measured phase, topics created and deleted, results written.
const runTimeout = 8 * time.Minute

// smallWorkload is a short, light run: the brokers and the cluster share a
// small machine, and the suite checks behaviour, not performance.
func smallWorkload(name string, testMinutes float64) v1alpha1.WorkloadSpec {
	return v1alpha1.WorkloadSpec{
		Name:                    name,
		Topics:                  1,
		PartitionsPerTopic:      2,
		MessageSize:             256,
		SubscriptionsPerTopic:   ptr.To[int32](1),
		ConsumerPerSubscription: 1,
		ProducersPerTopic:       1,
		ProducerRate:            200,
		WarmupDurationMinutes:   ptr.To(0.25),
		TestDurationMinutes:     ptr.To(testMinutes),
	}
}

// e2eWorkers are the two workers of every run the suite makes. Their CPU
// request is small: the specs run on parallel processes (make
// test-e2e-all), several runs at once on a test cluster of one 2-core
// node, where the default request (250m per worker, tested with the
// Job's builder in internal/provision/workers) would leave pods
// Unschedulable past the operator's grace, and fail their runs, only
// because other specs' runs hold the node's CPU. Memory stays as the
// default has it.
func e2eWorkers() v1alpha1.WorkersSpec {
	return v1alpha1.WorkersSpec{Count: 2, Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("25m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")},
	}}
}

func newRun(prefix string, system v1alpha1.System, existing v1alpha1.ExistingCluster, testMinutes float64) *v1alpha1.BenchmarkRun {
	return &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-", Namespace: testNS},
		Spec: v1alpha1.BenchmarkRunSpec{
			System:   system,
			Cluster:  v1alpha1.ClusterSpec{Existing: &existing},
			Workload: smallWorkload(prefix, testMinutes),
			Workers:  e2eWorkers(),
		},
	}
}

func getRun(ctx context.Context, run *v1alpha1.BenchmarkRun) *v1alpha1.BenchmarkRun {
	var got v1alpha1.BenchmarkRun
	ExpectWithOffset(2, k8s.Get(ctx, client.ObjectKeyFromObject(run), &got)).To(Succeed())
	return &got
}

// waitForPhase waits until the run reaches want; a run that finishes in the
// other final phase stops the wait at once with its message and pods.
func waitForPhase(ctx context.Context, run *v1alpha1.BenchmarkRun, want v1alpha1.Phase, timeout time.Duration) *v1alpha1.BenchmarkRun {
	var got *v1alpha1.BenchmarkRun
	EventuallyWithOffset(1, func(g Gomega) {
		got = getRun(ctx, run)
		final := got.Status.Phase == v1alpha1.PhaseSucceeded || got.Status.Phase == v1alpha1.PhaseFailed
		if final && got.Status.Phase != want {
			StopTrying(fmt.Sprintf("run %s ended %s, not %s: %s\npods: %s\n%s",
				got.Name, got.Status.Phase, want, got.Status.Message, podSummary(testNS), runLogs(got))).Now()
		}
		g.Expect(got.Status.Phase).To(Equal(want), "run %s is %s: %s", got.Name, got.Status.Phase, got.Status.Message)
	}).WithTimeout(timeout).WithPolling(2*time.Second).Should(Succeed(), func() string {
		return "pods: " + podSummary(testNS) + "\n" + runLogs(got)
	})
	return got
}

func runLogs(run *v1alpha1.BenchmarkRun) string {
	if run == nil {
		return ""
	}
	out, _ := kubectlE(nil, "-n", testNS, "logs", "--tail=40", "--prefix", "-l", workers.LabelRun+"="+run.Name)
	return "--- logs of the run's pods:\n" + out
}

// resultNotes are the notes of a run's results ConfigMap (the coordinator's
// remarks, e.g. why the broker resources were not measured), for failure
// messages.
func resultNotes(ctx context.Context, run *v1alpha1.BenchmarkRun) string {
	var cm corev1.ConfigMap
	if err := k8s.Get(ctx, types.NamespacedName{Namespace: testNS, Name: workers.ResultsName(run)}, &cm); err != nil {
		return "results ConfigMap: " + err.Error()
	}
	sum, err := results.Read(&cm)
	if err != nil {
		return "results ConfigMap: " + err.Error()
	}
	return "notes: " + strings.Join(sum.Notes, "; ")
}

// expectResults checks status.results, the results ConfigMap and the
// printer columns of a succeeded run.
func expectResults(ctx context.Context, run *v1alpha1.BenchmarkRun, system v1alpha1.System) {
	By("status.results carries the headline numbers")
	r := run.Status.Results
	Expect(r).NotTo(BeNil(), "status.results of %s", run.Name)
	Expect(r.Sent).To(BeNumerically(">", 0))
	Expect(r.Acked).To(Equal(r.Sent), "every sent message acknowledged")
	Expect(r.Received).To(BeNumerically(">=", r.Acked), "every acknowledged message consumed")
	Expect(r.Lost).To(BeZero())
	Expect(r.PublishMBPerSec).To(BeNumerically(">", 0))
	Expect(r.PublishLatencyMs.P99).To(BeNumerically(">", 0))
	Expect(r.EndToEndLatencyMs).NotTo(BeNil())
	Expect(run.Status.Durability).NotTo(BeNil())

	By("the results ConfigMap holds the same summary and the OMB result")
	Expect(run.Status.ResultsRef).To(Equal(workers.ResultsName(run)))
	var cm corev1.ConfigMap
	Expect(k8s.Get(ctx, types.NamespacedName{Namespace: testNS, Name: run.Status.ResultsRef}, &cm)).To(Succeed())
	Expect(cm.Data).To(HaveKey(results.KeyOMB))
	sum, err := results.Read(&cm)
	Expect(err).NotTo(HaveOccurred())
	Expect(sum.System).To(Equal(system))
	Expect(sum.Run).To(Equal(run.Name))
	Expect(sum.Results.Sent).To(Equal(r.Sent))
	Expect(sum.Results.Received).To(Equal(r.Received))
	Expect(sum.Workers).To(HaveLen(2))

	By("kubectl get benchmarkruns fills every printer column")
	out := kubectl(nil, "-n", testNS, "get", "benchmarkruns", run.Name)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	Expect(lines).To(HaveLen(2), out)
	for _, col := range []string{"NAME", "SYSTEM", "DURABILITY", "PHASE", "PUB MB/S", "PUB P99 (MS)", "CORRECTED P99 (MS)", "E2E P99 (MS)", "AGE"} {
		Expect(lines[0]).To(ContainSubstring(col), out)
	}
	Expect(lines[1]).NotTo(ContainSubstring("<none>"), out)
	fields := strings.Fields(lines[1])
	Expect(fields).To(HaveLen(9), out)
	Expect(fields[0]).To(Equal(run.Name))
	Expect(fields[1]).To(Equal(string(system)))
	Expect(fields[2]).To(Equal(strconv.Itoa(int(run.Status.Durability.AchievedLevel))))
	Expect(fields[3]).To(Equal(string(v1alpha1.PhaseSucceeded)))
	// The figures are rounded to two decimals (status.display); the full
	// values stay in status.results.
	Expect(r.CorrectedLatencyMs).NotTo(BeNil(), "status.results.correctedLatencyMs")
	full := []float64{r.PublishMBPerSec, r.PublishLatencyMs.P99, r.CorrectedLatencyMs.P99, r.EndToEndLatencyMs.P99}
	for i, f := range fields[4:8] {
		Expect(f).To(MatchRegexp(`^\d+\.\d\d$`), "column value %q in\n%s", f, out)
		Expect(f).To(Equal(strconv.FormatFloat(full[i], 'f', 2, 64)), out)
	}
	n, err := strconv.ParseFloat(fields[4], 64)
	Expect(err).NotTo(HaveOccurred())
	Expect(n).To(BeNumerically(">", 0), "publish throughput column in\n%s", out)
	GinkgoWriter.Printf("%s\n", out)
}

var _ = Describe("a run whose brokers are unreachable", func() {
	It("ends Failed with the reason", func(ctx SpecContext) {
		// Port 1 on the broker host: the connection is refused at once.
		run := newRun("e2e-unreachable", v1alpha1.SystemKafka, v1alpha1.ExistingCluster{BootstrapServers: brokerHost + ":1"}, 0.25)
		run.Spec.Timeouts.Run = &metav1.Duration{Duration: 4 * time.Minute}
		Expect(k8s.Create(ctx, run)).To(Succeed())
		got := waitForPhase(ctx, run, v1alpha1.PhaseFailed, 6*time.Minute)
		// The coordinator's own error (written to its termination message
		// file) names the brokers that do not answer: the message is that
		// error, not the log's tail.
		Expect(got.Status.Message).To(ContainSubstring(brokerHost+":1"), "status.message says which brokers failed")
		Expect(got.Status.Message).To(MatchRegexp(`exited with code 1 \(Error\): streambench: `), "status.message is the coordinator's error")
		var failed *metav1.Condition
		for i := range got.Status.Conditions {
			if got.Status.Conditions[i].Type == v1alpha1.ConditionFailed {
				failed = &got.Status.Conditions[i]
			}
		}
		Expect(failed).NotTo(BeNil(), "a Failed condition")
		Expect(failed.Status).To(Equal(metav1.ConditionTrue))
		Expect(failed.Reason).NotTo(BeEmpty())
		GinkgoWriter.Printf("failed run: reason %s: %s\n", failed.Reason, got.Status.Message)
	}, SpecTimeout(8*time.Minute))
})

// startHostKafka starts 3 Kafka brokers on the host, where pods reach them
// (brokerHost), stopped when the calling container ends.
func startHostKafka(ctx context.Context) *localbrokers.Kafka {
	By("starting 3 Kafka brokers on the host, listening on " + brokerHost)
	kafka, err := localbrokers.StartKafka(ctx, localbrokers.KafkaOptions{Host: brokerHost, Log: logf})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(kafka.Stop()).To(Succeed()) })
	return kafka
}

var _ = Describe("Kafka in existing-cluster mode", Ordered, func() {
	var kafka *localbrokers.Kafka

	BeforeAll(func(ctx SpecContext) { kafka = startHostKafka(ctx) }, NodeTimeout(6*time.Minute))

	It("runs a workload to Succeeded with results in status and the ConfigMap", func(ctx SpecContext) {
		run := newRun("e2e-kafka", v1alpha1.SystemKafka, v1alpha1.ExistingCluster{BootstrapServers: kafka.Bootstrap()}, 0.5)
		Expect(k8s.Create(ctx, run)).To(Succeed())
		got := waitForPhase(ctx, run, v1alpha1.PhaseSucceeded, runTimeout)
		expectResults(ctx, got, v1alpha1.SystemKafka)
	}, SpecTimeout(runTimeout+time.Minute))

	It("repeats a workload spec.repeats times: each repeat's headline and results, the medians in their intervals", func(ctx SpecContext) {
		run := newRun("e2e-repeats", v1alpha1.SystemKafka, v1alpha1.ExistingCluster{BootstrapServers: kafka.Bootstrap()}, 0.25)
		run.Spec.Repeats = 2
		Expect(k8s.Create(ctx, run)).To(Succeed())
		got := waitForPhase(ctx, run, v1alpha1.PhaseSucceeded, 2*runTimeout)

		By("status keeps each repeat's headline, and results their medians")
		Expect(got.Status.Repeats).To(HaveLen(2), "status.repeats")
		var sent int64
		for i, rep := range got.Status.Repeats {
			Expect(rep.Index).To(Equal(int32(i + 1)))
			Expect(rep.Results.Sent).To(BeNumerically(">", 0), "repeat %d", rep.Index)
			Expect(rep.Results.Lost).To(BeZero(), "repeat %d", rep.Index)
			sent += rep.Results.Sent
		}
		Expect(got.Status.Repeats[1].Start.Time).NotTo(BeTemporally("<", got.Status.Repeats[0].End.Time), "the repeats one after the other")
		Expect(got.Status.Results.Sent).To(Equal(sent), "counts are the repeats' sums")
		p99 := got.Status.Repeats[0].Results.PublishLatencyMs.P99
		Expect(got.Status.Results.PublishLatencyMs.P99).To(BeNumerically("~", (p99+got.Status.Repeats[1].Results.PublishLatencyMs.P99)/2, 1e-9), "the median of two")
		figures := map[string]v1alpha1.FigureInterval{}
		for _, iv := range got.Status.Intervals {
			figures[iv.Figure] = iv
		}
		Expect(figures).To(HaveKey("publishLatencyMs.p99"))
		Expect(figures["publishLatencyMs.p99"].N).To(Equal(int32(2)))

		By("the results ConfigMap holds the aggregate and each repeat's own results")
		var cm corev1.ConfigMap
		Expect(k8s.Get(ctx, types.NamespacedName{Namespace: testNS, Name: got.Status.ResultsRef}, &cm)).To(Succeed())
		sum, err := results.Read(&cm)
		Expect(err).NotTo(HaveOccurred())
		Expect(sum.Repeats).To(HaveLen(2))
		for i := 1; i <= 2; i++ {
			Expect(cm.Data).To(HaveKey(results.RepeatKey(i, results.KeySummary)))
			Expect(cm.Data).To(HaveKey(results.RepeatKey(i, results.KeyOMB)))
			Expect(cm.BinaryData).To(HaveKey(results.RepeatKey(i, results.KeyHistograms)))
		}

		By("each repeat's topics are gone, and kubectl get -o wide shows the repeats and the interval")
		Expect(kafkaTopics(ctx, kafka.Bootstrap(), kafkadriver.TopicPrefix+workers.RunID(run))).To(BeEmpty())
		out := kubectl(nil, "-n", testNS, "get", "benchmarkruns", run.Name, "-o", "wide")
		Expect(out).To(ContainSubstring("REPEATS"), out)
		Expect(out).To(MatchRegexp(`\d+\.\d\d \(\d+\.\d\d-\d+\.\d\d\)`), "a p99 column with its interval in\n%s", out)
		GinkgoWriter.Printf("%s\n", out)
	}, SpecTimeout(2*runTimeout+time.Minute))

	It("removes the Jobs of a run deleted while it is running", func(ctx SpecContext) {
		run := newRun("e2e-delete", v1alpha1.SystemKafka, v1alpha1.ExistingCluster{BootstrapServers: kafka.Bootstrap()}, 10)
		Expect(k8s.Create(ctx, run)).To(Succeed())
		waitForPhase(ctx, run, v1alpha1.PhaseRunning, 3*time.Minute)
		jobs := []string{workers.WorkerJobName(run), workers.CoordinatorName(run)}
		for _, name := range jobs {
			Expect(k8s.Get(ctx, types.NamespacedName{Namespace: testNS, Name: name}, &batchv1.Job{})).To(Succeed(), "Job %s while running", name)
		}
		// Mid-run means the topics exist: their deletion is part of what a
		// deleted run must still do (through its draining workers).
		prefix := kafkadriver.TopicPrefix + workers.RunID(run) + "-"
		// 5 minutes bound a hang only: Running means the Jobs exist, and
		// their pods start, and the coordinator creates the topics, on a
		// node that other specs' runs and brokers share (CI once took over
		// 2 minutes at a load of 40).
		Eventually(func(g Gomega) {
			g.Expect(kafkaTopics(ctx, kafka.Bootstrap(), prefix)).NotTo(BeEmpty(), "the run's topics (%s*) are created", prefix)
		}).WithTimeout(5 * time.Minute).WithPolling(time.Second).Should(Succeed())
		By("deleting the run while it is running")
		Expect(k8s.Delete(ctx, run)).To(Succeed())
		deleted := time.Now()
		Eventually(func(g Gomega) {
			g.Expect(kafkaTopics(ctx, kafka.Bootstrap(), prefix)).To(BeEmpty(), "the run's topics are deleted")
			for _, name := range jobs {
				err := k8s.Get(ctx, types.NamespacedName{Namespace: testNS, Name: name}, &batchv1.Job{})
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "Job %s still there (%v)", name, err)
			}
			err := k8s.Get(ctx, client.ObjectKeyFromObject(run), &v1alpha1.BenchmarkRun{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "run still there (%v)", err)
			var pods corev1.PodList
			g.Expect(k8s.List(ctx, &pods, client.InNamespace(testNS), client.MatchingLabels{workers.LabelRun: run.Name})).To(Succeed())
			g.Expect(pods.Items).To(BeEmpty(), "the run's pods are removed with its Jobs")
			// 4 minutes bound a hang only (2 s is usual): the cleanup goes
			// through draining workers and pod terminations on a node that
			// may be busy.
		}).WithTimeout(4 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		GinkgoWriter.Printf("run, Jobs, pods and topics gone %s after the deletion\n", time.Since(deleted).Round(time.Second))
	}, SpecTimeout(14*time.Minute))
})

var _ = Describe("Pulsar in existing-cluster mode", Ordered, func() {
	var pulsar *localbrokers.Pulsar

	BeforeAll(func(ctx SpecContext) {
		By("starting Pulsar standalone with 3 bookies on the host, listening on " + brokerHost)
		var err error
		pulsar, err = localbrokers.StartPulsar(ctx, localbrokers.PulsarOptions{Host: brokerHost, Log: logf, JVM: localbrokers.PulsarTestJVM})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(pulsar.Stop()).To(Succeed()) })
	}, NodeTimeout(6*time.Minute))

	It("runs a workload to Succeeded with results in status and the ConfigMap", func(ctx SpecContext) {
		run := newRun("e2e-pulsar", v1alpha1.SystemPulsar, v1alpha1.ExistingCluster{ServiceURL: pulsar.ServiceURL(), AdminURL: pulsar.AdminURL()}, 0.5)
		Expect(k8s.Create(ctx, run)).To(Succeed())
		got := waitForPhase(ctx, run, v1alpha1.PhaseSucceeded, runTimeout)
		expectResults(ctx, got, v1alpha1.SystemPulsar)
	}, SpecTimeout(runTimeout+time.Minute))
})

// kafkaTopics lists the topics on the brokers at bootstrap whose names
// start with prefix.
func kafkaTopics(ctx context.Context, bootstrap, prefix string) ([]string, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(bootstrap, ",")...))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	lctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	topics, err := kadm.NewClient(cl).ListTopics(lctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range topics.Names() {
		if strings.HasPrefix(name, prefix) {
			out = append(out, name)
		}
	}
	return out, nil
}

// expectBrokerJava checks what the testbed's Java probe read from a managed
// run's broker image: Java 21 (Strimzi 1.2.0's and Pulsar's images run it,
// upstream's and those hack/images builds alike), from the image the
// brokers ran, and the same runtime in the summary's brokers section.
func expectBrokerJava(ctx context.Context, run *v1alpha1.BenchmarkRun, image string) {
	GinkgoHelper()
	tb := run.Status.Testbed
	Expect(tb).NotTo(BeNil(), "status.testbed")
	Expect(tb.Topology).NotTo(BeNil(), "status.testbed.topology")
	Expect(tb.Topology.Java).NotTo(BeNil(), "status.testbed.topology.java; the testbed's note: %q", tb.Note)
	Expect(tb.Topology.Java.Major).To(BeEquivalentTo(21), "the broker image's Java: %+v", *tb.Topology.Java)
	// The pod spec's name, which may leave out the registry (the Pulsar
	// chart says apachepulsar/pulsar-all).
	Expect(tb.Topology.Image).To(HaveSuffix(image))
	var cm corev1.ConfigMap
	Expect(k8s.Get(ctx, types.NamespacedName{Namespace: run.Namespace, Name: workers.ResultsName(run)}, &cm)).To(Succeed())
	sum, err := results.Read(&cm)
	Expect(err).NotTo(HaveOccurred())
	Expect(sum.Brokers).NotTo(BeNil(), "summary.json's brokers section")
	Expect(sum.Brokers.Java).NotTo(BeNil(), "summary.json's brokers.java")
	Expect(*sum.Brokers.Java).To(Equal(*tb.Topology.Java))
	logf("%s: brokers on %s, Java %s (%s)", run.Name, image, tb.Topology.Java.Version, tb.Topology.Java.Vendor)
}
