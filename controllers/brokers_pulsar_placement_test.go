package controllers

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
)

// Issue 44: where a managed Pulsar run's pods go, and what the run says
// when they cannot go there.
var _ = Describe("a managed Pulsar run's placement", func() {
	It("says which Pulsar pods cannot be scheduled, and why, while it waits", func() {
		ns := newNamespace()
		run := validRun(ns, v1alpha1.SystemPulsar)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		waitPhase(run, v1alpha1.PhaseProvisioning)
		release := pulsar.ReleaseName(run)
		// What the bookie StatefulSet would create for a second bookie on
		// a one-node pool, as the scheduler leaves it (no scheduler runs
		// in envtest).
		labels := pulsar.ComponentPodLabels(release, pulsar.ComponentBookie)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: release + "-bookie-1", Namespace: ns, Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "bookie", Image: testImage}}},
		}
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		msg := "0/3 nodes are available: 1 node(s) didn't match pod anti-affinity rules, 2 node(s) didn't match Pod's node affinity/selector."
		pod.Status.Phase = corev1.PodPending
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable, Message: msg, LastTransitionTime: metav1.Now()}}
		Expect(k8sClient.Status().Update(ctx, pod)).To(Succeed())
		Eventually(func() string { return getRun(run).Status.Message }).Should(And(
			ContainSubstring("bookie pod "+pod.Name+" cannot be scheduled: "+msg),
			ContainSubstring("every bookie needs a node of its own"),
			ContainSubstring("lower spec.cluster.managed.bookies")))
	})

	It("fails in Pending, before the chart is installed, when ZooKeeper's claims would get no StorageClass", func() {
		ns := newNamespace()
		run := validRun(ns, v1alpha1.SystemPulsar)
		// As the sample leaves it; envtest has no default StorageClass.
		run.Spec.Cluster.Managed.Storage.MetadataStore.StorageClassName = nil
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		failed := waitPhase(run, v1alpha1.PhaseFailed)
		Expect(failed.Status.Message).To(And(
			ContainSubstring("spec.cluster.managed.storage.metadataStore.storageClassName is not set and the cluster has no default StorageClass"),
			ContainSubstring("set spec.cluster.managed.storage.metadataStore.storageClassName to a class")))
		cond := meta.FindStatusCondition(failed.Status.Conditions, v1alpha1.ConditionFailed)
		Expect(cond).NotTo(BeNil())
		Expect(cond.Reason).To(Equal(v1alpha1.ReasonMetadataStoreClass))
		// Nothing was deployed: no provisioning clock, no chart objects.
		Expect(failed.Status.StartTime).To(BeNil())
		var cm corev1.ConfigMap
		err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: pulsar.ReleaseName(run) + "-bookie-config"}, &cm)
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the chart's ConfigMap exists: %v", err)
	})
})
