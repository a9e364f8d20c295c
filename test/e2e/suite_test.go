//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/report"
	"github.com/streambench/streambench-operator/internal/suite"
)

// A BenchmarkSuite against brokers started on the host (existing mode, as
// the rest of the suite: no Strimzi or chart repository here): Kafka at
// levels 1 and 2, Pulsar at level 2, one short workload, so 3 cells that
// must run one after the other.
var _ = Describe("a BenchmarkSuite on existing brokers", Label("suite"), Ordered, func() {
	var (
		kafka  *localbrokers.Kafka
		pulsar *localbrokers.Pulsar
	)
	BeforeAll(func(ctx SpecContext) {
		By("starting 3 Kafka brokers and Pulsar standalone with 3 bookies on the host, listening on " + brokerHost)
		var err error
		kafka, err = localbrokers.StartKafka(ctx, localbrokers.KafkaOptions{Host: brokerHost, Log: logf})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(kafka.Stop()).To(Succeed()) })
		pulsar, err = localbrokers.StartPulsar(ctx, localbrokers.PulsarOptions{Host: brokerHost, Log: logf, JVM: localbrokers.PulsarTestJVM})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(pulsar.Stop()).To(Succeed()) })
	}, NodeTimeout(10*time.Minute))

	It("runs its cells one at a time to Succeeded and writes the table", func(ctx SpecContext) {
		s := &v1alpha1.BenchmarkSuite{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e-suite", Namespace: testNS},
			Spec: v1alpha1.BenchmarkSuiteSpec{
				Systems: []v1alpha1.SuiteSystem{
					{System: v1alpha1.SystemKafka, Cluster: v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{BootstrapServers: kafka.Bootstrap()}},
						Durabilities: []v1alpha1.DurabilitySpec{{Level: ptr.To(v1alpha1.Level1)}, {Level: ptr.To(v1alpha1.Level2)}}},
					{System: v1alpha1.SystemPulsar, Cluster: v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{ServiceURL: pulsar.ServiceURL(), AdminURL: pulsar.AdminURL()}},
						Durabilities: []v1alpha1.DurabilitySpec{{Level: ptr.To(v1alpha1.Level2)}}},
				},
				Workloads: []v1alpha1.SuiteWorkload{{Name: "small", Spec: ptr.To(smallWorkload("e2e-suite", 0.5))}},
				Workers:   e2eWorkers(),
			},
		}
		Expect(k8s.Create(ctx, s)).To(Succeed())
		want := []string{"e2e-suite-kafka-l1-small", "e2e-suite-kafka-l2-small", "e2e-suite-pulsar-l2-small"}

		By("watching that at most one cell runs at a time until the suite ends")
		var got v1alpha1.BenchmarkSuite
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), &got)).To(Succeed())
			var runs v1alpha1.BenchmarkRunList
			g.Expect(k8s.List(ctx, &runs, client.InNamespace(testNS), client.MatchingLabels{suite.LabelSuite: s.Name})).To(Succeed())
			var active []string
			for _, r := range runs.Items {
				if !r.Status.Phase.Finished() {
					active = append(active, r.Name)
				}
			}
			if len(active) > 1 {
				StopTrying(fmt.Sprintf("cells %v run at the same time", active)).Now()
			}
			if got.Status.Phase == v1alpha1.PhaseFailed {
				StopTrying(fmt.Sprintf("suite Failed: %s\npods: %s", got.Status.Message, podSummary(testNS))).Now()
			}
			g.Expect(got.Status.Phase).To(Equal(v1alpha1.PhaseSucceeded), "progress %s, cell %s: %s", got.Status.Progress, got.Status.CurrentCell, got.Status.Message)
		}).WithTimeout(3 * runTimeout).WithPolling(2 * time.Second).Should(Succeed())

		Expect(got.Status.Progress).To(Equal("3/3"))
		var names []string
		for _, c := range got.Status.Cells {
			names = append(names, c.Name)
			By("cell " + c.Name + " carries its run's headline figures")
			var run v1alpha1.BenchmarkRun
			Expect(k8s.Get(ctx, types.NamespacedName{Namespace: testNS, Name: c.Name}, &run)).To(Succeed())
			Expect(run.Spec.Cluster.Existing).NotTo(BeNil())
			expectResults(ctx, &run, c.System)
			Expect(c.Results).NotTo(BeNil())
			Expect(c.Results.PublishMBPerSec).To(Equal(run.Status.Results.PublishMBPerSec))
			Expect(c.Results.PublishP99Ms).To(Equal(run.Status.Results.PublishLatencyMs.P99))
			Expect(c.AchievedLevel).To(Equal(run.Status.Durability.AchievedLevel))
		}
		Expect(names).To(Equal(want))

		By("kubectl get bs shows Progress and Phase")
		out := kubectl(nil, "-n", testNS, "get", "bs", s.Name)
		Expect(out).To(ContainSubstring("PROGRESS"))
		Expect(out).To(ContainSubstring("3/3"))
		Expect(out).To(ContainSubstring("Succeeded"))

		By("the results ConfigMap renders as the suite's page")
		var cm corev1.ConfigMap
		Expect(k8s.Get(ctx, types.NamespacedName{Namespace: testNS, Name: suite.ConfigMapName(s.Name)}, &cm)).To(Succeed())
		Expect(cm.Data[suite.KeyTables]).To(ContainSubstring("workload small"))
		dir := GinkgoT().TempDir()
		Expect(suite.WriteFiles(&cm, dir)).To(Succeed())
		page, err := report.RenderSuiteDir(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(page).To(Equal(filepath.Join(dir, report.SuiteReportFile)))
		logf("%s", strings.TrimSpace(cm.Data[suite.KeyTables]))
	}, SpecTimeout(3*runTimeout+2*time.Minute))

	AfterAll(func(ctx context.Context) {
		_ = k8s.DeleteAllOf(ctx, &v1alpha1.BenchmarkSuite{}, client.InNamespace(testNS))
	})
})
