package controllers

import (
	"encoding/json"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
	"github.com/streambench/streambench-operator/internal/provision/workers"
)

// nodeOnMachine registers a Ready node whose kubelet reports the given
// machine and boot ids, as kubelets on one host report the same.
func nodeOnMachine(name, machineID, bootID string) {
	clusterNode(name, nil, true)
	var n corev1.Node
	ExpectWithOffset(1, k8sClient.Get(ctx, client.ObjectKey{Name: name}, &n)).To(Succeed())
	n.Status.NodeInfo.MachineID, n.Status.NodeInfo.BootID = machineID, bootID
	ExpectWithOffset(1, k8sClient.Status().Update(ctx, &n)).To(Succeed())
}

var _ = Describe("the machines under a run", func() {
	It("records that nodes sharing a boot id are one machine, before the load for summary.json and again with the workers' nodes", func() {
		ns := newNamespace()
		// The CI's local cluster: three kubelets on one host (one machine
		// id, one kernel), and a client node on a machine of its own.
		host, boot := strings.ReplaceAll(string(uuid.NewUUID()), "-", ""), string(uuid.NewUUID())
		local := []string{"machine-" + ns, "machine-" + ns + "-2", "machine-" + ns + "-3"}
		for _, n := range local {
			nodeOnMachine(n, host, boot)
		}
		client := "machine-client-" + ns
		nodeOnMachine(client, strings.ReplaceAll(string(uuid.NewUUID()), "-", ""), string(uuid.NewUUID()))

		storageClass("nvme-journal", dynamicProvisioner)
		storageClass("nvme-ledgers", dynamicProvisioner)
		run := validRun(ns, v1alpha1.SystemPulsar)
		run.Spec.Cluster.Managed.Storage.Journal.StorageClassName = ptr.To("nvme-journal")
		run.Spec.Cluster.Managed.Storage.Ledgers.StorageClassName = ptr.To("nvme-ledgers")
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		waitPhase(run, v1alpha1.PhaseProvisioning)
		release := pulsar.ReleaseName(run)
		for i, node := range local {
			brokerPod(ns, release+"-bookie-"+string(rune('0'+i)), node, pulsar.ComponentPodLabels(release, "bookie"))
		}
		brokerPod(ns, release+"-broker-0", local[1], pulsar.ComponentPodLabels(release, "broker"))
		pulsarReady(ns, release, pulsar.StatefulSetNames(release), pulsar.InitJobNames(release))

		By("before the load: the three probed nodes are one machine")
		running := waitPhase(run, v1alpha1.PhaseRunning)
		Expect(running.Status.Testbed.Nodes).To(HaveLen(3))
		m := running.Status.Testbed.Machines
		Expect(m).NotTo(BeNil())
		Expect(m.Nodes).To(Equal(int32(3)))
		Expect(m.Machines).To(Equal(int32(1)))
		Expect(m.Hosts).To(Equal([]v1alpha1.TestbedHost{{Nodes: local, By: v1alpha1.HostBootID, ID: boot[:8]}}))
		Expect(m.Note).To(Equal("3 nodes on 1 machine (" + strings.Join(local, ", ") + " share boot id " + boot[:8] +
			"): their CPU, memory and disk figures are one machine's, measured 3 times, not 3 machines'"))

		// The coordinator carries that record into summary.json.
		var fromArgs v1alpha1.Testbed
		for _, a := range getJob(run, workers.CoordinatorName(run)).Spec.Template.Spec.Containers[0].Args {
			if v, ok := strings.CutPrefix(a, "--testbed-json="); ok {
				Expect(json.Unmarshal([]byte(v), &fromArgs)).To(Succeed())
			}
		}
		Expect(fromArgs.Machines).To(Equal(m))

		By("once the workers are placed: their nodes too")
		loadPod(run, run.Name+"-workers-0", workers.RoleWorker, local[2])
		loadPod(run, run.Name+"-workers-1", workers.RoleWorker, client)
		loadPod(run, run.Name+"-coordinator-x", workers.RoleCoord, client)
		Eventually(func() *v1alpha1.WorkerPlacement { return getRun(run).Status.Testbed.Workers }).ShouldNot(BeNil())
		m = getRun(run).Status.Testbed.Machines
		Expect(m.Nodes).To(Equal(int32(4)))
		Expect(m.Machines).To(Equal(int32(2)))
		Expect(m.Hosts).To(Equal([]v1alpha1.TestbedHost{{Nodes: local, By: v1alpha1.HostBootID, ID: boot[:8]}}))
		Expect(m.Note).To(HavePrefix("4 nodes on 2 machines (" + strings.Join(local, ", ") + " share boot id " + boot[:8] + "): "))
	})
})
