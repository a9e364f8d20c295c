package controllers

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/faults"
	"github.com/streambench/streambench-operator/internal/provision/workers"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/tenancy"
)

// The tenancy model (docs/security.md, internal/tenancy): a run reaches
// into another namespace only where that namespace's owner agreed, by an
// annotation on the Namespace that a namespace's edit users cannot set.
// These specs attack as issue 58's tenant did; the e2e suite repeats them
// as an impersonated user on a real cluster.
var _ = Describe("a run reaching into another namespace", func() {
	var tenant, victim string
	BeforeEach(func() { tenant, victim = newNamespace(), newNamespace() })

	// victimRun is issue 58's attack: an existing cluster, allowDisruption
	// given by the run's author, the pods of another namespace selected.
	victimRun := func() *v1alpha1.BenchmarkRun {
		run := faultyRun(tenant, "victim", fault(v1alpha1.FaultDeletePod, "broker-0", time.Second))
		run.Spec.Cluster.Existing.Faults.Namespace = victim
		return run
	}
	consent := func(ns, value string) { annotateNamespace(ns, tenancy.AllowFaultsFrom, value) }

	It("refuses faults on another namespace's pods that its owner did not agree to, before anything runs, and the pod stays", func() {
		pod := existingBrokerPod(victim, "victim-broker-0", "victim", "", "")
		consent(victim, "some-other-team") // a consent, but not for this tenant
		run := victimRun()
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		msg := failedWith(run, v1alpha1.ReasonNotPermitted)
		Expect(msg).To(ContainSubstring("spec.cluster.existing.faults.namespace: namespace " + victim + " has not agreed that runs of namespace " + tenant))
		Expect(msg).To(ContainSubstring("kubectl annotate namespace " + victim + " streambench.io/allow-faults-from=" + tenant))
		Expect(getRun(run).Status.Faults).To(BeEmpty())
		Consistently(func(g Gomega) {
			var now corev1.Pod
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: victim, Name: pod.Name}, &now)).To(Succeed())
			g.Expect(now.UID).To(Equal(pod.UID))
		}, 2*time.Second).Should(Succeed())
	})

	It("refuses a namespace that does not exist with the same message, so refusals do not map namespaces", func() {
		run := faultyRun(tenant, "victim", fault(v1alpha1.FaultDeletePod, "broker-0", time.Second))
		run.Spec.Cluster.Existing.Faults.Namespace = "no-such-namespace"
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		Expect(failedWith(run, v1alpha1.ReasonNotPermitted)).To(ContainSubstring("namespace no-such-namespace has not agreed"))
	})

	It("refuses a Strimzi cluster of another namespace that did not agree to be read", func() {
		run := existingKafkaRun(tenant)
		run.Spec.Cluster.Existing = &v1alpha1.ExistingCluster{StrimziCluster: &v1alpha1.StrimziClusterRef{Name: "kafka", Namespace: victim}}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		msg := failedWith(run, v1alpha1.ReasonNotPermitted)
		Expect(msg).To(ContainSubstring("spec.cluster.existing.strimziCluster.namespace: namespace " + victim))
		Expect(msg).To(ContainSubstring("streambench.io/allow-runs-from=" + tenant))
	})

	It("disrupts another namespace's pods once its owner agreed, and no more once the agreement is withdrawn", func() {
		consent(victim, "team-x, "+tenant)
		existingBrokerPod(victim, "victim-broker-0", "victim", "", "")
		kept := existingBrokerPod(victim, "victim-broker-1", "victim", "", "")
		run := faultyRun(tenant, "victim",
			fault(v1alpha1.FaultDeletePod, "broker-0", time.Second),
			fault(v1alpha1.FaultDeletePod, "broker-1", 6*time.Second))
		run.Spec.Cluster.Existing.Faults.Namespace = victim
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		running := waitPhase(run, v1alpha1.PhaseRunning)
		startMeasuring(running, time.Now().Add(-2*time.Second))
		Eventually(faultStatus(run, 0)).ShouldNot(BeNil())
		Expect(faultStatus(run, 0)().Injected).To(BeTrue(), "message: %s", faultStatus(run, 0)().Message)
		Expect(faultStatus(run, 0)().Pod).To(Equal(victim + "/victim-broker-0"))

		consent(victim, "")
		Eventually(faultStatus(run, 1), 15*time.Second).ShouldNot(BeNil())
		withdrawn := faultStatus(run, 1)()
		Expect(withdrawn.Injected).To(BeFalse())
		Expect(withdrawn.Message).To(ContainSubstring("namespace " + victim + " no longer agrees"))
		var now corev1.Pod
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: victim, Name: kept.Name}, &now)).To(Succeed())
		Expect(now.UID).To(Equal(kept.UID))
	})
})

var _ = Describe("what the operator reads back from a run's namespace", func() {
	It("takes only the results ConfigMap its run controls: a tenant's look-alike of the same name steers no fault", func() {
		ns := newNamespace()
		pod := existingBrokerPod(ns, "kfk-broker-0", "kfk", "", "")
		run := faultyRun(ns, "kfk", fault(v1alpha1.FaultDeletePod, "broker-0", time.Second))
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		running := waitPhase(run, v1alpha1.PhaseRunning)
		// A fault clock of the right name and keys, made by the tenant:
		// not controlled by the run.
		w := &faults.ClockWriter{Client: k8sClient, Namespace: ns, Name: workers.ResultsName(running),
			Labels: map[string]string{results.LabelRun: running.Name}}
		Expect(w.Record(ctx, 0, time.Now().Add(-5*time.Second))).To(Succeed())
		Consistently(faultStatus(run, 0), 3*time.Second).Should(BeNil())
		var now corev1.Pod
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: pod.Name}, &now)).To(Succeed())
		Expect(now.UID).To(Equal(pod.UID))
	})
})

// annotateNamespace plays the namespace's owner: it sets consent c to
// value on namespace ns (created if missing), or removes it when value is
// empty.
func annotateNamespace(ns string, c tenancy.Consent, value string) {
	var obj corev1.Namespace
	err := k8sClient.Get(ctx, types.NamespacedName{Name: ns}, &obj)
	if apierrors.IsNotFound(err) {
		obj = corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		Expect(k8sClient.Create(ctx, &obj)).To(Succeed())
	} else {
		Expect(err).NotTo(HaveOccurred())
	}
	if obj.Annotations == nil {
		obj.Annotations = map[string]string{}
	}
	if value == "" {
		delete(obj.Annotations, string(c))
	} else {
		obj.Annotations[string(c)] = value
	}
	Expect(k8sClient.Update(ctx, &obj)).To(Succeed())
}
