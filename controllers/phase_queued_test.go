package controllers

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/probe"
)

// The queue (phase_queued.go, internal/runqueue): managed runs pinned to
// the same nodes go one at a time. Each spec pins its runs to a pool of
// its own (nodes named after its namespace), so runs other specs leave
// mid-flight on this API server do not share its nodes.
var _ = Describe("managed runs on the same nodes", func() {
	var ns string
	BeforeEach(func() {
		installStrimziCRDs()
		ns = newNamespace()
	})

	// pool registers a node of its own pool and removes it after the spec.
	pool := func(name string) string {
		node := name + "-1"
		clusterNode(node, map[string]string{"queue-pool": name}, true)
		DeferCleanup(func() {
			Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}))).To(Succeed())
		})
		return name
	}
	pinned := func(pool string) *v1alpha1.BenchmarkRun {
		run := validRun(ns, v1alpha1.SystemKafka)
		run.Spec.Cluster.Managed.Placement.NodeSelector = map[string]string{"queue-pool": pool}
		return run
	}
	queuedCondition := func(run *v1alpha1.BenchmarkRun) *metav1.Condition {
		return meta.FindStatusCondition(getRun(run).Status.Conditions, v1alpha1.ConditionQueued)
	}

	It("queues the second run behind the first, naming it, and lets it go once the first finishes; a disjoint pool and an existing cluster do not wait", func() {
		poolA, poolB := pool("queue-a-"+ns), pool("queue-b-"+ns)

		first := pinned(poolA)
		Expect(k8sClient.Create(ctx, first)).To(Succeed())
		waitPhase(first, v1alpha1.PhaseProvisioning)
		Expect(queuedCondition(first).Reason).To(Equal(v1alpha1.ReasonAdmitted))

		second := pinned(poolA)
		Expect(k8sClient.Create(ctx, second)).To(Succeed())
		queued := waitPhase(second, v1alpha1.PhaseQueued)
		want := fmt.Sprintf("waiting for run %s/%s (Provisioning on the same nodes: %s-1)", ns, first.Name, poolA)
		Expect(queued.Status.Message).To(Equal(want))
		c := meta.FindStatusCondition(queued.Status.Conditions, v1alpha1.ConditionQueued)
		Expect(c).NotTo(BeNil())
		Expect(c.Status).To(Equal(metav1.ConditionTrue))
		Expect(c.Reason).To(Equal(v1alpha1.ReasonWaitingForRun))
		Expect(c.Message).To(Equal(want))
		Expect(queued.Status.StartTime).To(BeNil(), "nothing deployed, the provisioning clock not started")
		Expect(kafkaExists(second)).To(BeFalse())

		// A run on another pool, and one on an existing cluster, go at once.
		other := pinned(poolB)
		Expect(k8sClient.Create(ctx, other)).To(Succeed())
		waitPhase(other, v1alpha1.PhaseProvisioning)
		Expect(queuedCondition(other).Status).To(Equal(metav1.ConditionFalse))
		existing := existingKafkaRun(ns)
		Expect(k8sClient.Create(ctx, existing)).To(Succeed())
		Eventually(func() v1alpha1.Phase { return getRun(existing).Status.Phase }).Should(BeElementOf(v1alpha1.PhaseProvisioning, v1alpha1.PhaseRunning))
		Expect(queuedCondition(existing)).To(BeNil())

		Consistently(func() v1alpha1.Phase { return getRun(second).Status.Phase }, "2s").Should(Equal(v1alpha1.PhaseQueued))

		// The first fails (as at its provisioning deadline): it is torn
		// down, and the second goes by itself.
		failed := getRun(first)
		orig := failed.DeepCopy()
		Expect(failed.MoveTo(v1alpha1.PhaseFailed, "failed by the test")).To(BeTrue())
		Expect(k8sClient.Status().Patch(ctx, failed, client.MergeFrom(orig))).To(Succeed())

		provisioning := waitPhase(second, v1alpha1.PhaseProvisioning)
		c = meta.FindStatusCondition(provisioning.Status.Conditions, v1alpha1.ConditionQueued)
		Expect(c.Status).To(Equal(metav1.ConditionFalse))
		Expect(c.Reason).To(Equal(v1alpha1.ReasonAdmitted))
		Expect(provisioning.Status.PhaseTimes.Queued).NotTo(BeNil())
		Expect(meta.IsStatusConditionTrue(getRun(first).Status.Conditions, v1alpha1.ConditionTornDown)).To(BeTrue())
		Eventually(func() bool { return kafkaExists(second) }).Should(BeTrue())
	})

	It("says which static volumes must be freed when all of its class are Released", func() {
		poolA := pool("queue-d-" + ns)
		class := "queue-nvme-" + ns
		Expect(k8sClient.Create(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Provisioner: probe.StaticProvisioner})).To(Succeed())
		var pvs []*corev1.PersistentVolume
		for i := range 3 {
			pv := &corev1.PersistentVolume{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", class, i)},
				Spec: corev1.PersistentVolumeSpec{
					Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Ti")},
					AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
					StorageClassName:              class,
					PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/mnt/nvme0"}},
					ClaimRef:                      &corev1.ObjectReference{Namespace: ns, Name: fmt.Sprintf("data-0-gone-run-%d", i)},
				},
			}
			Expect(k8sClient.Create(ctx, pv)).To(Succeed())
			pv.Status.Phase = corev1.VolumeReleased
			Expect(k8sClient.Status().Update(ctx, pv)).To(Succeed())
			pvs = append(pvs, pv)
			DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, pv))).To(Succeed()) })
		}

		run := pinned(poolA)
		run.Spec.Cluster.Managed.Storage.Data.StorageClassName = ptr.To(class)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		queued := waitPhase(run, v1alpha1.PhaseQueued)
		Expect(queued.Status.Message).To(HavePrefix("waiting for disks: the brokers claim 3 PersistentVolume(s) of class " + class + " and 0 are Available"))
		Expect(queued.Status.Message).To(ContainSubstring(class + "-0 (Released), " + class + "-1 (Released), " + class + "-2 (Released)"))
		Expect(queued.Status.Message).To(ContainSubstring("hack/free-local-disks.sh " + class))
		Expect(meta.FindStatusCondition(queued.Status.Conditions, v1alpha1.ConditionQueued).Reason).To(Equal(v1alpha1.ReasonWaitingForDisks))

		// The disk recipe frees them; the run, looked at again, goes.
		for _, pv := range pvs {
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pv), pv)).To(Succeed())
			pv.Status.Phase = corev1.VolumeAvailable
			Expect(k8sClient.Status().Update(ctx, pv)).To(Succeed())
		}
		touch := getRun(run)
		orig := touch.DeepCopy()
		touch.Annotations = map[string]string{"test/poke": "1"}
		Expect(k8sClient.Patch(ctx, touch, client.MergeFrom(orig))).To(Succeed())
		waitPhase(run, v1alpha1.PhaseProvisioning)
	})
})

// kafkaExists says whether the run's Kafka was deployed.
func kafkaExists(run *v1alpha1.BenchmarkRun) bool {
	kafka := kafkaObject(run)
	return k8sClient.Get(ctx, client.ObjectKeyFromObject(kafka), kafka) == nil
}
