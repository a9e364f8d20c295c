package controllers

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
	"github.com/streambench/streambench-operator/internal/provision/workers"
)

// defaultNode is the node every spec's workers may go to: envtest has no
// kubelet, so no Node registers itself, and a cluster without a node
// takes no worker (workers.CheckNodes). It carries no label but its
// hostname and no taint, as a plain node of a small cluster.
const defaultNode = "worker-node-1"

// clusterNode plays a kubelet registering its node: a Node with labels
// and taints, Ready (or not) in its status. Nodes are cluster-wide and
// shared by the suite's specs, so each spec names its own.
func clusterNode(name string, labels map[string]string, ready bool, taints ...corev1.Taint) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}}, Spec: corev1.NodeSpec{Taints: taints}}
	for k, v := range labels {
		n.Labels[k] = v
	}
	if err := k8sClient.Create(ctx, n); apierrors.IsAlreadyExists(err) {
		ExpectWithOffset(1, k8sClient.Get(ctx, client.ObjectKey{Name: name}, n)).To(Succeed())
	} else {
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
	}
	status, reason := corev1.ConditionTrue, "KubeletReady"
	if !ready {
		status, reason = corev1.ConditionFalse, "KubeletNotReady"
	}
	now := metav1.Now()
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status, Reason: reason, LastHeartbeatTime: now, LastTransitionTime: now}}
	ExpectWithOffset(1, k8sClient.Status().Update(ctx, n)).To(Succeed())
	if !ready {
		return
	}
	// The API server's TaintNodesByCondition admission gives a new node
	// node.kubernetes.io/not-ready:NoSchedule; the node lifecycle
	// controller, which envtest does not run, removes it once the node
	// is Ready. Played here, or no pod without that toleration would fit.
	var kept []corev1.Taint
	for _, t := range n.Spec.Taints {
		if t.Key != corev1.TaintNodeNotReady {
			kept = append(kept, t)
		}
	}
	n.Spec.Taints = kept
	ExpectWithOffset(1, k8sClient.Update(ctx, n)).To(Succeed())
}

var _ = Describe("the workers' nodes", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("fails a run at once, before anything is deployed, when no node matches spec.workers.placement, naming the field, the nodes and the fix", func() {
		// First by name among the suite's nodes, so the message, which
		// names at most five of a kind, names it.
		broker := "a-broker-" + ns
		clusterNode(broker, map[string]string{"node-pool": "streaming"}, true)
		pool := "clients-" + ns
		run := validRun(ns, v1alpha1.SystemPulsar)
		run.Spec.Workers.Placement.NodeSelector = map[string]string{"node-pool": pool}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())

		failed := waitPhase(run, v1alpha1.PhaseFailed)
		Expect(failed.Status.Message).To(ContainSubstring("no node can run the workers"))
		Expect(failed.Status.Message).To(ContainSubstring(broker + " (node-pool=streaming)"))
		Expect(failed.Status.Message).To(MatchRegexp(`0 of \d+ nodes fit spec\.workers\.placement`))
		Expect(failed.Status.Message).To(ContainSubstring("spec.workers.placement.nodeSelector node-pool=" + pool))
		Expect(failed.Status.Message).To(ContainSubstring("kubectl label node NODE node-pool=" + pool))
		c := meta.FindStatusCondition(failed.Status.Conditions, v1alpha1.ConditionWorkersSchedulable)
		Expect(c).NotTo(BeNil())
		Expect(c.Status).To(Equal(metav1.ConditionFalse))
		Expect(c.Reason).To(Equal(v1alpha1.ReasonNoWorkerNode))
		Expect(meta.FindStatusCondition(failed.Status.Conditions, v1alpha1.ConditionFailed).Reason).To(Equal(v1alpha1.ReasonNoWorkerNode))
		// Nothing was deployed: the provisioning clock never started and
		// the Helm release's objects never appear.
		Expect(failed.Status.StartTime).To(BeNil())
		var cms corev1.ConfigMapList
		Expect(k8sClient.List(ctx, &cms, client.InNamespace(ns), client.MatchingLabels{"release": pulsar.ReleaseName(run)})).To(Succeed())
		Expect(cms.Items).To(BeEmpty())
	})

	It("refuses a client node that is cordoned, NotReady or tainted, and an existing-cluster run too", func() {
		pool := "clients-" + ns
		clusterNode("cordoned-"+ns, map[string]string{"node-pool": pool}, true)
		var n corev1.Node
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "cordoned-" + ns}, &n)).To(Succeed())
		n.Spec.Unschedulable = true
		Expect(k8sClient.Update(ctx, &n)).To(Succeed())
		clusterNode("notready-"+ns, map[string]string{"node-pool": pool}, false)
		clusterNode("tainted-"+ns, map[string]string{"node-pool": pool}, true, corev1.Taint{Key: "dedicated", Value: "clients", Effect: corev1.TaintEffectNoSchedule})

		run := existingKafkaRun(ns)
		run.Spec.Workers.Placement.NodeSelector = map[string]string{"node-pool": pool}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		failed := waitPhase(run, v1alpha1.PhaseFailed)
		Expect(failed.Status.Message).To(ContainSubstring("cordoned-" + ns + " is cordoned"))
		Expect(failed.Status.Message).To(ContainSubstring("notready-" + ns + " (Ready=False: KubeletNotReady) is not Ready"))
		Expect(failed.Status.Message).To(ContainSubstring("tainted-" + ns + " (dedicated=clients:NoSchedule) has taints that spec.workers.placement.tolerations do not tolerate"))
		Expect(failed.Status.StartTime).To(BeNil())

		By("the same run with the taint tolerated passes the check")
		ok := existingKafkaRun(ns)
		ok.Spec.Workers.Placement.NodeSelector = map[string]string{"node-pool": pool}
		ok.Spec.Workers.Placement.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "clients", Effect: corev1.TaintEffectNoSchedule}}
		Expect(k8sClient.Create(ctx, ok)).To(Succeed())
		running := waitPhase(ok, v1alpha1.PhaseRunning)
		c := meta.FindStatusCondition(running.Status.Conditions, v1alpha1.ConditionWorkersSchedulable)
		Expect(c).NotTo(BeNil())
		Expect(c.Status).To(Equal(metav1.ConditionTrue))
		Expect(c.Message).To(MatchRegexp(`^1 of \d+ nodes can take the workers under spec\.workers\.placement \(tainted-` + ns + `\)$`))
	})

	It("passes a run whose placement a node matches, spreads its workers and records where they ran, co-located or not", func() {
		pool := "clients-" + ns
		clusterNode("client-a-"+ns, map[string]string{"node-pool": pool}, true)
		clusterNode("client-b-"+ns, map[string]string{"node-pool": pool}, true)
		run := existingKafkaRun(ns)
		run.Spec.Workers.Count = 4
		run.Spec.Workers.Placement.NodeSelector = map[string]string{"node-pool": pool}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		running := waitPhase(run, v1alpha1.PhaseRunning)
		Expect(meta.IsStatusConditionTrue(running.Status.Conditions, v1alpha1.ConditionWorkersSchedulable)).To(BeTrue())

		// The API server took the spread as built.
		for _, name := range []string{workers.WorkerJobName(run), workers.CoordinatorName(run)} {
			tsc := getJob(run, name).Spec.Template.Spec.TopologySpreadConstraints
			Expect(tsc).To(HaveLen(1), "Job %s", name)
			Expect(tsc[0].TopologyKey).To(Equal(corev1.LabelHostname))
			Expect(tsc[0].WhenUnsatisfiable).To(Equal(corev1.ScheduleAnyway))
			Expect(tsc[0].LabelSelector.MatchLabels).To(Equal(map[string]string{workers.LabelRun: run.Name, workers.LabelRole: workers.RoleWorker}))
		}

		// Play the Job controller and the scheduler: four workers on the
		// two client nodes, the coordinator on one of them; the last
		// worker bound last, so nothing is recorded before it is.
		a, b := "client-a-"+ns, "client-b-"+ns
		for i, node := range []string{a, b, a} {
			loadPod(run, fmt.Sprintf("%s-workers-%d", run.Name, i), workers.RoleWorker, node)
		}
		loadPod(run, run.Name+"-coordinator-x", workers.RoleCoord, a)
		Consistently(func() *v1alpha1.WorkerPlacement { return getRun(run).Status.Testbed.Workers }, "1s").Should(BeNil())
		loadPod(run, run.Name+"-workers-3", workers.RoleWorker, b)

		var placed *v1alpha1.WorkerPlacement
		Eventually(func() *v1alpha1.WorkerPlacement {
			placed = getRun(run).Status.Testbed.Workers
			return placed
		}).ShouldNot(BeNil())
		Expect(placed.Workers).To(Equal(int32(4)))
		Expect(placed.WorkerNodes).To(Equal(int32(2)))
		Expect(placed.CoLocated).To(BeTrue())
		Expect(placed.Pods).To(HaveLen(5))
		Expect(placed.Note).To(HavePrefix(fmt.Sprintf("4 workers on 2 nodes (co-located: %s runs 2, %s runs 2)", a, b)))
		Expect(placed.Note).To(HaveSuffix("the coordinator on " + a + " (with 2 workers)"))
	})
})

// loadPod plays the Job controller and the scheduler: a pending pod of
// the run's Job of role, bound to node.
func loadPod(run *v1alpha1.BenchmarkRun, name, role, node string) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: run.Namespace, OwnerReferences: jobControlled(loadJob(run, role)),
			Labels: map[string]string{workers.LabelRun: run.Name, workers.LabelRole: role}},
		Spec: corev1.PodSpec{NodeName: node, RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: role, Image: testImage}}},
	}
	ExpectWithOffset(1, k8sClient.Create(ctx, pod)).To(Succeed())
}
