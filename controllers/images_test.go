package controllers

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/workers"
)

// testAllowedImages is the envtest operator's allow-list
// (--allowed-worker-images): every tag of one development repository.
var testAllowedImages = []string{"registry.example/streambench-dev:*"}

var _ = Describe("a run's worker image", func() {
	existingRun := func(ns, image string) *v1alpha1.BenchmarkRun {
		run := validRun(ns, v1alpha1.SystemKafka)
		run.Spec.Cluster = v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{BootstrapServers: "kafka.example:9092"}}
		run.Spec.Workers.Image = image
		return run
	}

	It("fails in Pending when spec.workers.image is neither the operator's nor on its allow-list, naming the field, the image and the fix; nothing is deployed", func() {
		ns := newNamespace()
		// The Secret the run names is never read: the image is refused first.
		run := existingRun(ns, "evil.example/exfiltrate:1")
		run.Spec.Cluster.Existing.Authentication = &v1alpha1.ClientAuthentication{Mechanism: v1alpha1.AuthScramSHA512, Username: "alice",
			Password: &v1alpha1.SecretKeyRef{Name: "someone-elses", Key: "password"}}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		Expect(failedWith(run, ReasonImageNotAllowed)).To(Equal(
			"spec.workers.image: image evil.example/exfiltrate:1 is not allowed by this operator, which runs its own worker image " + testImage +
				" and those on its allow-list (registry.example/streambench-dev:*): the coordinator and the workers mount the Secrets the run names, so their image is the operator admin's choice; " +
				"remove spec.workers.image to run " + testImage + ", or ask the operator's admin to add evil.example/exfiltrate:1 to the chart's allowedWorkerImages (manager flag --allowed-worker-images)"))
		_, provisioned := getRun(run).Status.EnteredAt(v1alpha1.PhaseProvisioning)
		Expect(provisioned).To(BeFalse(), "refused before provisioning")
		noJobs(run)
	})

	It("runs an image of the allow-list, and the operator's own when a run names it", func() {
		ns := newNamespace()
		for _, image := range []string{"registry.example/streambench-dev:pr-58", testImage} {
			run := existingRun(ns, image)
			Expect(k8sClient.Create(ctx, run)).To(Succeed())
			waitPhase(run, v1alpha1.PhaseRunning)
			for _, name := range []string{workers.CoordinatorName(run), workers.WorkerJobName(run)} {
				Expect(getJob(run, name).Spec.Template.Spec.Containers[0].Image).To(Equal(image), "Job %s", name)
			}
		}
	})
})
