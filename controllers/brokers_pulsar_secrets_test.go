package controllers

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
	"github.com/streambench/streambench-operator/internal/provision/workers"
)

// jobSecretKeys lists the Secret keys a Job's pods mount, as secret/key.
func jobSecretKeys(job *batchv1.Job) []string {
	var keys []string
	for _, v := range job.Spec.Template.Spec.Volumes {
		if v.Secret == nil {
			continue
		}
		for _, it := range v.Secret.Items {
			keys = append(keys, v.Secret.SecretName+"/"+it.Key)
		}
	}
	return keys
}

var _ = Describe("a secured managed Pulsar run", func() {
	It("makes the Secrets the chart mounts, gives its clients the TLS ports, the CA and its own token, and removes the Secrets at teardown", func() {
		ns := newNamespace()
		run := validRun(ns, v1alpha1.SystemPulsar)
		run.Spec.Cluster.Managed.Security = &v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthToken}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		waitPhase(run, v1alpha1.PhaseProvisioning)
		created := getRun(run)
		release := pulsar.ReleaseName(created)

		By("the CA, the brokers' certificate, the signing key and the tokens are the run's")
		names := pulsar.SecretNames(created)
		Expect(names).To(HaveLen(7))
		secrets := make([]*corev1.Secret, len(names))
		for i, name := range names {
			s := &corev1.Secret{}
			Eventually(func() error {
				return k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, s)
			}).Should(Succeed(), "Secret %s", name)
			Expect(metav1.IsControlledBy(s, created)).To(BeTrue(), "Secret %s is controlled by the run", name)
			Expect(s.Labels).To(HaveKeyWithValue(pulsar.LabelRun, created.Name))
			secrets[i] = s
		}
		Expect(secrets[1].Type).To(Equal(corev1.SecretTypeTLS))
		var bookieConfig corev1.ConfigMap
		Eventually(func() error {
			return k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: release + "-bookie-config"}, &bookieConfig)
		}).Should(Succeed(), "the chart is installed")
		for _, s := range secrets {
			var again corev1.Secret
			Expect(k8sClient.Get(ctx, client0(s), &again)).To(Succeed())
			Expect(again.UID).To(Equal(s.UID), "Secret %s is made once, not again at the next reconcile", s.Name)
		}

		pulsarReady(ns, release, pulsar.StatefulSetNames(release), pulsar.InitJobNames(release))
		running := waitPhase(run, v1alpha1.PhaseRunning)
		Expect(running.Status.Brokers.ServiceURL).To(Equal("pulsar+ssl://" + release + "-broker." + ns + ".svc:6651"))
		Expect(running.Status.Brokers.AdminURL).To(Equal("https://" + release + "-broker." + ns + ".svc:8443"))

		By("the coordinator and the workers mount the CA and the benchmark's token, nothing of the brokers'")
		for _, name := range []string{workers.CoordinatorName(created), workers.WorkerJobName(created)} {
			Expect(jobSecretKeys(getJob(run, name))).To(ConsistOf(
				pulsar.CASecretName(release)+"/ca.crt",
				pulsar.TokenSecretName(release, pulsar.SubjectBenchmark)+"/TOKEN"), name)
		}

		runToSucceeded(run)
		By("teardown deletes them (envtest has no garbage collector: the operator does)")
		for _, s := range secrets {
			Eventually(gone(s)).WithTimeout(time.Minute).Should(BeTrue(), "Secret %s after teardown", s.Name)
		}
		Eventually(gone(&bookieConfig)).Should(BeTrue())
	})

	It("fails, naming it, when a Secret the chart needs is someone else's, and leaves it alone", func() {
		ns := newNamespace()
		run := validRun(ns, v1alpha1.SystemPulsar)
		run.GenerateName, run.Name = "", "secured"
		run.Spec.Cluster.Managed.Security = &v1alpha1.ManagedSecurity{Authentication: v1alpha1.ManagedAuthToken}
		release := pulsar.ReleaseName(run)
		foreign := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pulsar.TokenKeySecretName(release)},
			StringData: map[string]string{"SECRETKEY": "not the run's"},
		}
		Expect(k8sClient.Create(ctx, foreign)).To(Succeed())
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		failed := waitPhase(run, v1alpha1.PhaseFailed)
		Expect(failed.Status.Message).To(ContainSubstring("Secret " + ns + "/" + foreign.Name + " exists already and was not made by this run"))
		Expect(failed.Status.Message).NotTo(ContainSubstring("not the run's"))
		Consistently(func() error {
			return k8sClient.Get(ctx, client0(foreign), &corev1.Secret{})
		}, "2s").Should(Succeed(), "the foreign Secret stays")
		for _, name := range pulsar.SecretNames(failed) {
			if name == foreign.Name {
				continue
			}
			Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &corev1.Secret{})).NotTo(Succeed(), "Secret %s made for a run that failed before its install", name)
		}
	})
})

func client0(s *corev1.Secret) types.NamespacedName {
	return types.NamespacedName{Namespace: s.Namespace, Name: s.Name}
}
