package controllers

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/archive"
	"github.com/streambench/streambench-operator/internal/archive/archivetest"
	"github.com/streambench/streambench-operator/internal/provision/workers"
	"github.com/streambench/streambench-operator/internal/report"
	"github.com/streambench/streambench-operator/internal/results"
)

var _ = Describe("a finished run's archive", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	archivedCondition := func(run *v1alpha1.BenchmarkRun) func(Gomega) *metav1.Condition {
		return func(g Gomega) *metav1.Condition {
			var got v1alpha1.BenchmarkRun
			g.Expect(k8sClient.Get(ctx, key(run), &got)).To(Succeed())
			c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionArchived)
			g.Expect(c).NotTo(BeNil())
			return c
		}
	}

	It("of spec.results.archive is an archiver Job in the run's namespace: the results ConfigMap mounted, the run's Secret as its credentials, no API token", func() {
		run := existingKafkaRun(ns)
		run.Spec.Results = &v1alpha1.ResultsSpec{Archive: &v1alpha1.ArchiveSpec{
			URL: "s3://team-bench/nightly", Endpoint: "http://s3.storage:9000", PathStyle: true, CredentialsSecret: "bench-s3",
		}}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		done := runToSucceeded(run)

		job := getJob(run, workers.ArchiverName(run))
		Expect(metav1.IsControlledBy(job, done)).To(BeTrue())
		pod := job.Spec.Template.Spec
		Expect(*pod.AutomountServiceAccountToken).To(BeFalse())
		Expect(pod.Volumes).To(ContainElement(HaveField("VolumeSource.ConfigMap.Name", done.Status.ResultsRef)))
		c := pod.Containers[0]
		path := archive.RunPath(ns, run.Name, done.CreationTimestamp.Time)
		Expect(c.Args).To(Equal([]string{"archive", workers.ResultsMount, "--from-configmap", "--to=s3://team-bench/nightly", "--path=" + path, "--endpoint=http://s3.storage:9000", "--path-style"}))
		var fromSecret []string
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				Expect(e.ValueFrom.SecretKeyRef.Name).To(Equal("bench-s3"))
				fromSecret = append(fromSecret, e.Name+"="+e.ValueFrom.SecretKeyRef.Key)
			}
		}
		Expect(fromSecret).To(ConsistOf("AWS_ACCESS_KEY_ID=accessKeyID", "AWS_SECRET_ACCESS_KEY=secretAccessKey", "AWS_SESSION_TOKEN=sessionToken"))

		// No kubelet here: the archiver's pods and the Job's counts are
		// written as the kubelet and the Job controller would (a fake of
		// what cannot run in envtest; the e2e suite runs the real Job).
		archiverPod(job, "failed", "archiving /results to s3://team-bench/nightly: the bucket does not exist")
		start := metav1.NewTime(time.Now().Add(-time.Minute))
		job.Status.StartTime, job.Status.Failed = &start, 1
		Expect(k8sClient.Status().Update(ctx, job)).To(Succeed())
		Eventually(archivedCondition(run)).Should(And(
			HaveField("Status", metav1.ConditionFalse), HaveField("Reason", v1alpha1.ReasonArchiveFailed),
			HaveField("Message", ContainSubstring("attempt 1 of 5; the results stay in ConfigMap "+done.Status.ResultsRef)),
			HaveField("Message", ContainSubstring("the bucket does not exist"))))
		Eventually(eventReasons(ns, run.Name)).Should(ContainElement(ContainSubstring("Warning/ArchiveFailed")))

		archiverPod(job, "ok", "archived 7 files to s3://team-bench/nightly/"+path)
		job = getJob(run, workers.ArchiverName(run))
		job.Status.Succeeded = 1
		setJobFinished(job, true)
		Expect(k8sClient.Status().Update(ctx, job)).To(Succeed())
		Eventually(archivedCondition(run)).Should(HaveField("Status", metav1.ConditionTrue))
		got := getRun(run)
		Expect(got.Status.Archive).To(Equal(&v1alpha1.ArchiveStatus{URL: "s3://team-bench/nightly/" + path, Files: 7, Attempts: 2}))
		Expect(got.Status.Phase).To(Equal(v1alpha1.PhaseSucceeded))
	})

	Context("of the operator's default archive (the chart's archive values)", Ordered, func() {
		var endpoint, access, secret, bucket string
		BeforeAll(func() {
			endpoint, access, secret, bucket = archivetest.Start(GinkgoT())
		})
		withDefault := func(credentials map[string]string) {
			name := "archive-credentials-" + ns
			Expect(k8sClient.Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: name},
				StringData: credentials,
			})).To(Succeed())
			defaultArchive = &v1alpha1.ArchiveSpec{URL: "s3://" + bucket + "/team", Endpoint: endpoint, PathStyle: true, CredentialsSecret: name}
			restartManager()
			DeferCleanup(func() {
				defaultArchive = nil
				restartManager()
			})
		}

		It("is uploaded by the operator into the real bucket: every file of the results as `streambench report` lays them out, report.html included", func() {
			withDefault(map[string]string{v1alpha1.ArchiveAccessKeyID: access, v1alpha1.ArchiveSecretAccessKey: secret})
			run := existingKafkaRun(ns)
			run.Spec.Repeats = 2
			Expect(k8sClient.Create(ctx, run)).To(Succeed())
			running := waitPhase(run, v1alpha1.PhaseRunning)
			writeRepeatedResults(running, running.Status.Durability, 2)
			finishJob(getJob(run, workers.CoordinatorName(run)), true)
			waitPhase(run, v1alpha1.PhaseSucceeded)
			Eventually(archivedCondition(run)).WithTimeout(time.Minute).Should(HaveField("Status", metav1.ConditionTrue))
			got := getRun(run)
			path := archive.RunPath(ns, run.Name, got.CreationTimestamp.Time)
			Expect(got.Status.Archive.URL).To(Equal("s3://" + bucket + "/team/" + path))

			loc, err := archive.ParseLocation("s3://" + bucket + "/team")
			Expect(err).NotTo(HaveOccurred())
			store, err := archive.Open(ctx, loc, archive.S3Options{Endpoint: endpoint, PathStyle: true, AccessKeyID: access, SecretAccessKey: secret})
			Expect(err).NotTo(HaveOccurred())
			keys, err := store.List(ctx, path)
			Expect(err).NotTo(HaveOccurred())
			Expect(keys).To(ContainElements(
				path+"/"+results.KeySummary, path+"/"+report.FileName,
				path+"/repeat-1/"+results.KeySummary, path+"/repeat-1/"+report.FileName,
				path+"/repeat-2/"+results.KeySummary))
			Expect(got.Status.Archive.Files).To(BeNumerically("==", len(keys)))
			var cm corev1.ConfigMap
			Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: got.Status.ResultsRef}, &cm)).To(Succeed())
			summary, err := store.Get(ctx, path+"/"+results.KeySummary)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(summary)).To(Equal(cm.Data[results.KeySummary]))
		})

		It("that refuses the upload leaves the run Succeeded with its results in the ConfigMap, says so in condition Archived and events, and gives up after five attempts", func() {
			withDefault(map[string]string{v1alpha1.ArchiveAccessKeyID: access, v1alpha1.ArchiveSecretAccessKey: "not-the-secret"})
			run := existingKafkaRun(ns)
			Expect(k8sClient.Create(ctx, run)).To(Succeed())
			runToSucceeded(run)
			Eventually(archivedCondition(run)).WithTimeout(time.Minute).Should(And(
				HaveField("Status", metav1.ConditionFalse), HaveField("Reason", v1alpha1.ReasonArchiveAbandoned),
				HaveField("Message", ContainSubstring("after 5 attempts")),
				HaveField("Message", ContainSubstring("they stay in ConfigMap"))))
			Eventually(eventReasons(ns, run.Name)).Should(ContainElements(
				ContainSubstring("Warning/ArchiveFailed"), ContainSubstring("Warning/ArchiveAbandoned")))
			got := getRun(run)
			Expect(got.Status.Phase).To(Equal(v1alpha1.PhaseSucceeded))
			Expect(got.Status.Archive.Attempts).To(BeNumerically("==", v1alpha1.ArchiveAttempts))
			var cm corev1.ConfigMap
			Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: got.Status.ResultsRef}, &cm)).To(Succeed())
			Expect(cm.Data).To(HaveKey(results.KeySummary))
		})
	})
})

// archiverPod records an ended pod of the archiver Job with the
// termination message its command wrote, as the kubelet would.
func archiverPod(job *batchv1.Job, suffix, message string) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: job.Name + "-" + suffix, Labels: job.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: ptr.To(true)}}},
		Spec: job.Spec.Template.Spec,
	}
	ExpectWithOffset(1, k8sClient.Create(ctx, pod)).To(Succeed())
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: workers.RoleArchiver, State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{Message: message, FinishedAt: metav1.NewTime(time.Now())},
	}}}
	ExpectWithOffset(1, k8sClient.Status().Update(context.Background(), pod)).To(Succeed())
}
