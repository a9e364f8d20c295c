package controllers

import (
	"encoding/json"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/privileged"
	"github.com/streambench/streambench-operator/internal/provision/probe"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
	"github.com/streambench/streambench-operator/internal/provision/workers"
)

// dynamicProvisioner makes a volume per claim: the probe may claim its
// classes.
const dynamicProvisioner = "ebs.csi.aws.com"

// managedPulsarWithBrokerPods creates a managed Pulsar run whose bookies
// and brokers (pods the chart's StatefulSets would make, played here) sit
// on node-a and node-b, and makes the release ready, after beforeReady.
// Its journal and ledgers classes provision volumes on demand, unless
// mutate says other.
func managedPulsarWithBrokerPods(ns string, mutate func(*v1alpha1.BenchmarkRun), beforeReady ...func(*v1alpha1.BenchmarkRun)) *v1alpha1.BenchmarkRun {
	storageClass("nvme-journal", dynamicProvisioner)
	storageClass("nvme-ledgers", dynamicProvisioner)
	run := validRun(ns, v1alpha1.SystemPulsar)
	s := &run.Spec.Cluster.Managed.Storage
	s.Journal.StorageClassName = ptr.To("nvme-journal")
	s.Ledgers.StorageClassName = ptr.To("nvme-ledgers")
	if mutate != nil {
		mutate(run)
	}
	Expect(k8sClient.Create(ctx, run)).To(Succeed())
	waitPhase(run, v1alpha1.PhaseProvisioning)
	release := pulsar.ReleaseName(run)
	for i, node := range []string{"node-a", "node-b", "node-a"} {
		brokerPod(ns, release+"-bookie-"+string(rune('0'+i)), node, pulsar.ComponentPodLabels(release, "bookie"))
	}
	brokerPod(ns, release+"-broker-0", "node-b", pulsar.ComponentPodLabels(release, "broker"))
	// Not a broker node: a ZooKeeper on node-c is not probed.
	brokerPod(ns, release+"-zookeeper-0", "node-c", pulsar.ComponentPodLabels(release, "zookeeper"))
	for _, f := range beforeReady {
		f(run)
	}
	pulsarReady(ns, release, pulsar.StatefulSetNames(release), pulsar.InitJobNames(release))
	return run
}

var _ = Describe("the testbed of a run", func() {
	It("probes each broker and bookie node once, on ephemeral volumes of the journal and ledgers classes, and records the slowest fsync p99", func() {
		ns := manualNamespace()
		run := managedPulsarWithBrokerPods(ns, nil)

		Eventually(jobNamesWithRole(ns, probe.RoleProbe)).Should(ConsistOf(
			probe.JobName(run, "node-a")+"@node-a", probe.JobName(run, "node-b")+"@node-b"))
		jobA := getJob(run, probe.JobName(run, "node-a"))
		Expect(probe.DecodeRoles(jobA.Annotations[probe.AnnotationRoles])).To(Equal([]string{"bookie"}))
		Expect(probe.DecodeRoles(getJob(run, probe.JobName(run, "node-b")).Annotations[probe.AnnotationRoles])).To(Equal([]string{"bookie", "broker"}))
		pod := jobA.Spec.Template.Spec
		Expect(pod.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0].Values).To(Equal([]string{"node-a"}))
		classes := map[string]string{}
		for _, v := range pod.Volumes {
			Expect(v.Ephemeral).NotTo(BeNil(), "volume %s", v.Name)
			classes[v.Name] = *v.Ephemeral.VolumeClaimTemplate.Spec.StorageClassName
		}
		Expect(classes).To(Equal(map[string]string{"journal": "nvme-journal", "ledgers": "nvme-ledgers"}))
		Expect(pod.Containers[0].SecurityContext.Privileged).To(BeNil())
		Expect(jobA.OwnerReferences).To(HaveLen(1))

		// No load before the probes are done, and no page-cache Job when
		// not asked for.
		Consistently(func() v1alpha1.Phase { return getRun(run).Status.Phase }, "1s").Should(Equal(v1alpha1.PhaseProvisioning))
		Expect(privilegedJobNames(run, probe.RoleDropCache)()).To(BeEmpty())

		// node-a's probe succeeds; node-b's Job fails: recorded, not fatal.
		Expect(probePod(jobA, "node-a", nodeResult("node-a", 3.25, 640))).To(Succeed())
		finishJob(jobA, true)
		finishJob(getJob(run, probe.JobName(run, "node-b")), false)

		running := waitPhase(run, v1alpha1.PhaseRunning)
		tb := running.Status.Testbed
		Expect(tb).NotTo(BeNil())
		Expect(tb.Scope).To(Equal(v1alpha1.TestbedBrokerNodes))
		Expect(tb.Nodes).To(HaveLen(2))
		Expect(tb.Nodes[0].Node).To(Equal("node-a"))
		Expect(tb.Nodes[0].Roles).To(Equal([]string{"bookie"}))
		Expect(tb.Nodes[0].Volumes[0].FsyncLatencyMs.P99).To(Equal(3.25))
		Expect(tb.Nodes[1].Error).To(ContainSubstring("BackoffLimitExceeded"))
		Expect(tb.Note).To(ContainSubstring("1 of 2 nodes not measured ([node-b])"))
		Expect(*tb.SlowestFsyncP99Ms).To(Equal(3.25))
		Expect(running.Status.Display).NotTo(BeNil())
		Expect(running.Status.Display.FsyncP99Ms).To(Equal("3.25"))
		Expect(tb.Topology.Brokers).To(Equal(int32(3)))
		Expect(tb.Topology.Bookies).To(Equal(int32(3)))
		// What each component got is recorded (no resources in this spec:
		// the chart's own, so nothing sized).
		Expect(tb.Topology.Components).To(Equal([]v1alpha1.ComponentEnvelope{
			{Component: "metadataStore", Replicas: 3}, {Component: "bookie", Replicas: 3}, {Component: "broker", Replicas: 3}}))
		Expect(tb.PageCacheDropped).To(BeNil())

		// The coordinator carries the testbed into summary.json.
		args := getJob(run, workers.CoordinatorName(run)).Spec.Template.Spec.Containers[0].Args
		var fromArgs v1alpha1.Testbed
		for _, a := range args {
			if v, ok := strings.CutPrefix(a, "--testbed-json="); ok {
				Expect(json.Unmarshal([]byte(v), &fromArgs)).To(Succeed())
			}
		}
		Expect(fromArgs.SlowestFsyncP99Ms).NotTo(BeNil())
		Expect(*fromArgs.SlowestFsyncP99Ms).To(Equal(3.25))

		// The probe Jobs are removed once read.
		Eventually(gone(jobA)).Should(BeTrue())
	})

	It("drops the page cache on every broker node with a privileged Job in the operator's namespace, after the probes and before the load, only when asked", func() {
		ns := manualNamespace()
		run := managedPulsarWithBrokerPods(ns, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Testbed = &v1alpha1.TestbedSpec{DropPageCache: true}
		})
		for _, node := range []string{"node-a", "node-b"} {
			job := getJob(run, probe.JobName(run, node))
			// The caches are dropped after the probes, whose writes would
			// otherwise fill them again.
			Expect(privilegedJobNames(run, probe.RoleDropCache)()).To(BeEmpty())
			Expect(probePod(job, node, nodeResult(node, 1, 900))).To(Succeed())
			finishJob(job, true)
		}
		// Only on the run's broker nodes: not node-c, its ZooKeeper's.
		Eventually(privilegedJobNames(run, probe.RoleDropCache)).Should(ConsistOf(
			probe.DropCacheJobName(run, "node-a")+"@node-a", probe.DropCacheJobName(run, "node-b")+"@node-b"))
		noPrivilegedJobIn(ns)
		drop := getPrivilegedJob(probe.DropCacheJobName(run, "node-b"))
		Expect(*drop.Spec.Template.Spec.Containers[0].SecurityContext.Privileged).To(BeTrue())
		Expect(drop.Spec.Template.Spec.Containers[0].Args).To(Equal([]string{"drop-page-cache"}))
		Expect(drop.OwnerReferences).To(BeEmpty(), "no owner reference crosses namespaces")
		Expect(drop.Labels).To(HaveKeyWithValue(privileged.LabelRunNamespace, ns))
		Consistently(func() v1alpha1.Phase { return getRun(run).Status.Phase }, "1s").Should(Equal(v1alpha1.PhaseProvisioning))

		finishJob(getPrivilegedJob(probe.DropCacheJobName(run, "node-a")), true)
		finishJob(drop, true)
		running := waitPhase(run, v1alpha1.PhaseRunning)
		Expect(running.Status.Testbed.PageCacheDropped).NotTo(BeNil())
		// A testbed section without probe is probed: the CRD's default.
		Expect(running.Spec.Testbed.Probe).To(HaveValue(BeTrue()))
		// Done with, they go from the operator's namespace.
		Eventually(privilegedJobNames(run, probe.RoleDropCache)).Should(BeEmpty())
	})

	It("claims no volume of a static class (each one a bookie's disk): no probe Job, and status.testbed says why", func() {
		storageClass("local-nvme", probe.StaticProvisioner)
		ns := manualNamespace()
		run := managedPulsarWithBrokerPods(ns, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Cluster.Managed.Storage.Journal.StorageClassName = ptr.To("local-nvme")
			r.Spec.Cluster.Managed.Storage.Ledgers.StorageClassName = ptr.To("local-nvme")
		})
		// The namespace is manual: a probe Job, once created, would hold
		// the run in Provisioning until its deadline (minutes), since no
		// one here finishes it.
		running := waitPhase(run, v1alpha1.PhaseRunning)
		tb := running.Status.Testbed
		Expect(tb).NotTo(BeNil())
		Expect(tb.Note).To(Equal("storage not probed: class local-nvme has static volumes (kubernetes.io/no-provisioner), each one a bookie's disk; the probe would take one"))
		Expect(tb.Nodes).To(BeEmpty())
		Expect(tb.SlowestFsyncP99Ms).To(BeNil())
		Expect(tb.Scope).To(Equal(v1alpha1.TestbedBrokerNodes))
		Expect(tb.Topology).NotTo(BeNil(), "what was deployed is still recorded")
		Expect(jobNamesWithRole(ns, probe.RoleProbe)()).To(BeEmpty())
	})

	It("probes a dynamic journal class and leaves static ledgers out, saying so", func() {
		storageClass("local-nvme", probe.StaticProvisioner)
		ns := manualNamespace()
		run := managedPulsarWithBrokerPods(ns, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Cluster.Managed.Storage.Ledgers.StorageClassName = ptr.To("local-nvme")
		})
		for _, node := range []string{"node-a", "node-b"} {
			job := getJob(run, probe.JobName(run, node))
			var claims []string
			for _, v := range job.Spec.Template.Spec.Volumes {
				Expect(v.Ephemeral).NotTo(BeNil(), "volume %s", v.Name)
				claims = append(claims, v.Name+"="+*v.Ephemeral.VolumeClaimTemplate.Spec.StorageClassName)
			}
			Expect(claims).To(Equal([]string{"journal=nvme-journal"}), "node %s", node)
			Expect(probePod(job, node, nodeResult(node, 1, 900))).To(Succeed())
			finishJob(job, true)
		}
		tb := waitPhase(run, v1alpha1.PhaseRunning).Status.Testbed
		Expect(tb.Nodes).To(HaveLen(2))
		Expect(tb.Note).To(Equal("ledgers not probed: class local-nvme has static volumes (kubernetes.io/no-provisioner), each one a bookie's disk; the probe would take one"))
	})

	It("runs no probe when spec.testbed.probe is false, and says so", func() {
		ns := manualNamespace()
		run := managedPulsarWithBrokerPods(ns, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Testbed = &v1alpha1.TestbedSpec{Probe: ptr.To(false)}
		})
		// Manual namespace: a probe Job would hold the run (see above).
		tb := waitPhase(run, v1alpha1.PhaseRunning).Status.Testbed
		Expect(tb).NotTo(BeNil())
		Expect(tb.Note).To(Equal(probe.NoteProbeOff))
		Expect(tb.Nodes).To(BeEmpty())
		Expect(jobNamesWithRole(ns, probe.RoleProbe)()).To(BeEmpty())
	})

	It("runs no probe on the workers' pool of an existing cluster when spec.testbed.probe is false", func() {
		ns := manualNamespace()
		run := existingKafkaRun(ns)
		run.Spec.Testbed = &v1alpha1.TestbedSpec{Probe: ptr.To(false)}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		tb := waitPhase(run, v1alpha1.PhaseRunning).Status.Testbed
		Expect(tb.Note).To(Equal(probe.NoteProbeOff), "not the note of a probed workers' node")
		Expect(tb.Nodes).To(BeEmpty())
		Expect(jobNamesWithRole(ns, probe.RoleProbe)()).To(BeEmpty())
	})

	It("fails a run whose page-cache drop failed, saying on which node", func() {
		ns := manualNamespace()
		run := managedPulsarWithBrokerPods(ns, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Testbed = &v1alpha1.TestbedSpec{DropPageCache: true}
		})
		for _, node := range []string{"node-a", "node-b"} {
			job := getJob(run, probe.JobName(run, node))
			Expect(probePod(job, node, nodeResult(node, 1, 900))).To(Succeed())
			finishJob(job, true)
		}
		finishJob(getPrivilegedJob(probe.DropCacheJobName(run, "node-a")), true)
		finishJob(getPrivilegedJob(probe.DropCacheJobName(run, "node-b")), false)
		failed := waitPhase(run, v1alpha1.PhaseFailed)
		Expect(failed.Status.Message).To(ContainSubstring("the page cache was not dropped on every broker node (node node-b"))
	})

	It("refuses at once a page-cache drop when the operator's namespace forbids privileged pods, telling the cluster admin the fix, never the tenant", func() {
		ns := newNamespace()
		labelOperatorNamespace(map[string]string{privileged.LabelPodSecurityEnforce: "baseline"})
		run := validRun(ns, v1alpha1.SystemPulsar)
		run.Spec.Testbed = &v1alpha1.TestbedSpec{DropPageCache: true}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		failed := waitPhase(run, v1alpha1.PhaseFailed)
		Expect(failed.Status.Message).To(ContainSubstring(`the operator's namespace ` + operatorNamespace + `, where it runs its privileged Jobs, enforces Pod Security level "baseline"`))
		Expect(failed.Status.Message).To(ContainSubstring("a cluster admin allows them with `kubectl label namespace " + operatorNamespace + " pod-security.kubernetes.io/enforce=privileged --overwrite`"))
		Expect(failed.Status.Message).NotTo(ContainSubstring("kubectl label namespace "+ns), "the tenant's namespace needs no privilege")
		Expect(failed.Status.Message).To(ContainSubstring("or set spec.testbed.dropPageCache to false"))
		// Nothing was deployed: the Helm release's objects never appear.
		var cms corev1.ConfigMapList
		Expect(k8sClient.List(ctx, &cms, client.InNamespace(ns), client.MatchingLabels{"release": pulsar.ReleaseName(run)})).To(Succeed())
		Expect(cms.Items).To(BeEmpty())
		Expect(failed.Status.StartTime).To(BeNil())
	})

	It("drops the page cache for a run whose own namespace forbids privileged pods: the Jobs run in the operator's", func() {
		ns := manualNamespace()
		labelNamespace(ns, map[string]string{privileged.LabelPodSecurityEnforce: "baseline"})
		run := managedPulsarWithBrokerPods(ns, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Testbed = &v1alpha1.TestbedSpec{DropPageCache: true}
		})
		for _, node := range []string{"node-a", "node-b"} {
			job := getJob(run, probe.JobName(run, node))
			Expect(probePod(job, node, nodeResult(node, 1, 900))).To(Succeed())
			finishJob(job, true)
		}
		for _, node := range []string{"node-a", "node-b"} {
			finishJob(getPrivilegedJob(probe.DropCacheJobName(run, node)), true)
		}
		Expect(waitPhase(run, v1alpha1.PhaseRunning).Status.Testbed.PageCacheDropped).NotTo(BeNil())
		noPrivilegedJobIn(ns)
	})

	It("refuses a page-cache drop for an existing cluster, whose broker nodes are not known", func() {
		run := existingKafkaRun(newNamespace())
		run.Spec.Testbed = &v1alpha1.TestbedSpec{DropPageCache: true}
		err := k8sClient.Create(ctx, run)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("spec.testbed.dropPageCache needs managed brokers"))
	})

	It("probes a node of the workers' pool for an existing cluster and says the brokers' disks were not measured", func() {
		ns := manualNamespace()
		run := existingKafkaRun(ns)
		clusterNode("load-1", map[string]string{"pool": "load"}, true)
		run.Spec.Workers.Placement.NodeSelector = map[string]string{"pool": "load"}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		job := getJob(run, probe.WorkerPoolJobName(run))
		Expect(job.Spec.Template.Spec.NodeSelector).To(Equal(map[string]string{"pool": "load"}))
		Expect(job.Spec.Template.Spec.Volumes[0].EmptyDir).NotTo(BeNil())
		Expect(probePod(job, "load-1", nodeResult("load-1", 0.5, 1500))).To(Succeed())
		finishJob(job, true)
		running := waitPhase(run, v1alpha1.PhaseRunning)
		tb := running.Status.Testbed
		Expect(tb.Scope).To(Equal(v1alpha1.TestbedWorkerNodes))
		Expect(tb.Note).To(ContainSubstring("the brokers' disks were not measured"))
		Expect(tb.Nodes).To(HaveLen(1))
		Expect(tb.Nodes[0].Node).To(Equal("load-1"))
		Expect(tb.Nodes[0].Roles).To(Equal([]string{"worker"}))
		var j batchv1.Job
		Eventually(func() bool {
			return k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: job.Name}, &j) != nil
		}).Should(BeTrue())
	})
})
