//go:build e2e

package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// The probe is real here: a Job on a real node runs `streambench probe`
// on an emptyDir, and the operator reads its termination message.
var _ = Describe("the testbed probe of an existing-cluster run", func() {
	It("runs on a node of the cluster and fills status.testbed before the load", func(ctx SpecContext) {
		// Unreachable brokers: the probe comes before the load, so the run
		// has its testbed whatever the brokers do afterwards.
		run := newRun("e2e-probe", v1alpha1.SystemKafka, v1alpha1.ExistingCluster{BootstrapServers: brokerHost + ":1"}, 0.25)
		Expect(k8s.Create(ctx, run)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { _ = k8s.Delete(ctx, run) })

		var tb *v1alpha1.Testbed
		Eventually(func(g Gomega) {
			got := getRun(ctx, run)
			tb = got.Status.Testbed
			g.Expect(tb).NotTo(BeNil(), "run %s is %s: %s\npods: %s", got.Name, got.Status.Phase, got.Status.Message, podSummary(testNS))
		}).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())

		Expect(tb.Scope).To(Equal(v1alpha1.TestbedWorkerNodes))
		Expect(tb.Note).To(ContainSubstring("the brokers' disks were not measured"))
		Expect(tb.Nodes).To(HaveLen(1))
		n := tb.Nodes[0]
		Expect(n.Error).To(BeEmpty())
		var nodes corev1.NodeList
		Expect(k8s.List(ctx, &nodes)).To(Succeed())
		var names []string
		for _, node := range nodes.Items {
			names = append(names, node.Name)
		}
		Expect(names).To(ContainElement(n.Node), "the probe reports the node it ran on (downward API spec.nodeName)")
		Expect(n.CPUs).To(BeNumerically(">", 0))
		Expect(n.MemoryBytes).To(BeNumerically(">", 0))
		Expect(n.Kernel).NotTo(BeEmpty())
		Expect(n.Volumes).To(HaveLen(1))
		v := n.Volumes[0]
		Expect(v.Name).To(Equal("scratch"))
		Expect(v.WriteBytes).To(BeNumerically(">", 0))
		Expect(v.WriteMBPerSec).To(BeNumerically(">", 0))
		Expect(v.FsyncLatencyMs.Count).To(BeNumerically(">", 0))
		Expect(v.FsyncLatencyMs.Max).To(BeNumerically(">=", v.FsyncLatencyMs.P99))
		Expect(tb.SlowestFsyncP99Ms).NotTo(BeNil())
		Expect(*tb.SlowestFsyncP99Ms).To(Equal(v.FsyncLatencyMs.P99))
	}, SpecTimeout(7*time.Minute))
})
