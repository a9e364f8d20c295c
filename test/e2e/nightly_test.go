//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/archive"
	"github.com/streambench/streambench-operator/internal/archive/archivetest"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/provision/workers"
	"github.com/streambench/streambench-operator/internal/results"
)

// The nightly benchmark of config/samples/nightly/nightly.yaml as a team
// runs it (issue 61), on the real cluster with a real S3-compatible
// server (versitygw on the host, where the pods reach it as they reach
// the host's brokers): the CronJob's Job four times, each creating a run
// that archives its results and then gating on the archive. Three nights
// of one configuration pass; on the fourth the brokers are slowed (paused
// 5 s of every 5.5, as a broker stalling on its disk would), and
// the gate fails on exactly that night. As the tenant, a run cannot make
// the archiver read a Secret of another namespace.
//
// Serial (after the parallel specs, alone): the gate's bound holds only
// against quiet nights that are quiet within 57x (below). Beside the
// three-node Pulsar spec's run and teardown, in the cold run at 3d7a2c5,
// the first night's publish p50 was 697 ms and its p99 5.3 s (then 111
// and 40 ms), and the slowed fourth night's 2.6 s stood within that
// spread: the gate rightly passed it, and the spec failed.
var _ = Describe("a nightly benchmark with an archive and a regression gate", Label("archive"), Serial, Ordered, func() {
	var (
		kafka                            *localbrokers.Kafka
		endpoint, access, secret, bucket string
	)
	BeforeAll(func(ctx SpecContext) {
		kafka = startHostKafka(ctx)
		endpoint, access, secret, bucket = archivetest.StartOn(GinkgoT(), brokerHost)
		Expect(k8s.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: "bench-s3"},
			StringData: map[string]string{v1alpha1.ArchiveAccessKeyID: access, v1alpha1.ArchiveSecretAccessKey: secret},
		})).To(Succeed())
	}, NodeTimeout(6*time.Minute))

	// nightly applies the sample with what this cluster has in place of
	// the user's: the brokers, the bucket's endpoint and name, the image,
	// and a shorter, lighter load. Each replacement must hit.
	nightly := func(ctx context.Context) {
		raw, err := os.ReadFile(filepath.Join(repoRoot, "config", "samples", "nightly", "nightly.yaml"))
		Expect(err).NotTo(HaveOccurred())
		s := string(raw)
		for _, r := range [][2]string{
			{"my-cluster-kafka-bootstrap.kafka.svc:9092", kafka.Bootstrap()},
			{"http://minio.storage.svc:9000", endpoint},
			{"s3://team-bench/nightly", "s3://" + bucket + "/nightly"},
			{"ghcr.io/streambench/streambench:latest", image},
			{"testDurationMinutes: 1", "testDurationMinutes: 0.25\n        warmupDurationMinutes: 0.1"},
			{"count: 1", "count: 1\n        resources: {requests: {cpu: 25m, memory: 256Mi}, limits: {memory: 2Gi}}"},
		} {
			Expect(strings.Count(s, r[0])).To(BeNumerically(">=", 1), "the sample no longer says %q", r[0])
			s = strings.ReplaceAll(s, r[0], r[1])
		}
		kubectl([]byte(s), "-n", testNS, "apply", "-f", "-")
	}

	// night runs the CronJob's Job once (kubectl create job --from, as a
	// user tries a CronJob out) and returns whether it succeeded, with its
	// pods' logs.
	night := func(ctx context.Context, n int) (bool, string) {
		name := fmt.Sprintf("nightly-%d", n)
		kubectl(nil, "-n", testNS, "create", "job", name, "--from=cronjob/streambench-nightly")
		var job batchv1.Job
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: testNS, Name: name}, &job)).To(Succeed())
			g.Expect(job.Status.Succeeded + job.Status.Failed).To(BeNumerically(">", 0))
		}).WithTimeout(runTimeout).WithPolling(3*time.Second).Should(Succeed(), func() string { return podSummary(testNS) })
		logs, _ := kubectlE(nil, "-n", testNS, "logs", "job/"+name, "--all-containers", "--prefix")
		GinkgoWriter.Printf("night %d:\n%s\n", n, logs)
		return job.Status.Succeeded > 0, logs
	}

	It("passes its gate on three nights of one configuration and fails it on exactly the slowed fourth", func(ctx SpecContext) {
		nightly(ctx)
		for n := 1; n <= 3; n++ {
			ok, logs := night(ctx, n)
			Expect(ok).To(BeTrue(), "night %d's gate failed:\n%s", n, logs)
			Expect(logs).To(ContainSubstring("archive: "), "night %d's run says where it was archived", n)
		}

		// A slowdown no busy machine can hide. With 3 runs and the
		// gate's 0.01 over these runs' 8 figures, a figure's interval is
		// the mean ± t(2, 1 − 0.01/16) · √(4/3) = 32.6 SDs, and a segment
		// of positive figures has an SD of at most √3 times its mean: a
		// value over 57.5 times the mean fails the gate whatever the
		// first three nights did (TestStandBeyondAnySpread). Pauses of
		// 5 s of every 5.5 put the publish p50 near 2.3 s, which load
		// cannot put within: that needs the first nights' p50 averaging
		// 39 ms (3 ms quiet, 18 beside three busy loops). Pauses of
		// 400 ms of every 500, p50 near 180 ms, were not enough in CI
		// even at 0.01 per figure (p50 +508 %: "within the series'
		// spread").
		By("slowing the brokers on the fourth night: SIGSTOP 5 s of every 5.5")
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					for _, pid := range kafka.Pids() {
						_ = syscall.Kill(pid, syscall.SIGCONT)
					}
					return
				case <-time.After(500 * time.Millisecond):
				}
				for _, pid := range kafka.Pids() {
					_ = syscall.Kill(pid, syscall.SIGSTOP)
				}
				time.Sleep(5 * time.Second)
				for _, pid := range kafka.Pids() {
					_ = syscall.Kill(pid, syscall.SIGCONT)
				}
			}
		}()
		ok, logs := night(ctx, 4)
		close(stop)
		wg.Wait()
		Expect(ok).To(BeFalse(), "the gate passed the slowed night:\n%s", logs)
		Expect(logs).To(ContainSubstring("--fail-on-regression"))
		Expect(logs).To(MatchRegexp(`publish p50[^\n]*worse`), "the gate names the publish p50, which got worse")

		By("the archive holds the four runs' results, each with its report")
		loc, err := archive.ParseLocation("s3://" + bucket + "/nightly")
		Expect(err).NotTo(HaveOccurred())
		store, err := archive.Open(ctx, loc, archive.S3Options{Endpoint: endpoint, PathStyle: true, AccessKeyID: access, SecretAccessKey: secret})
		Expect(err).NotTo(HaveOccurred())
		keys, err := store.List(ctx, "runs/"+testNS)
		Expect(err).NotTo(HaveOccurred())
		var summaries, reports int
		for _, k := range keys {
			switch {
			case strings.HasSuffix(k, "/"+results.KeySummary):
				summaries++
			case strings.HasSuffix(k, "/report.html"):
				reports++
			}
		}
		Expect(summaries).To(Equal(4), "keys: %v", keys)
		Expect(reports).To(Equal(4), "keys: %v", keys)

		By("every run archived, by its archiver Job, with no API token")
		var runs v1alpha1.BenchmarkRunList
		Expect(k8s.List(ctx, &runs, client.InNamespace(testNS))).To(Succeed())
		var nightlies int
		for _, r := range runs.Items {
			if !strings.HasPrefix(r.Name, "nightly-kafka-") {
				continue
			}
			nightlies++
			c := meta.FindStatusCondition(r.Status.Conditions, v1alpha1.ConditionArchived)
			Expect(c).NotTo(BeNil(), "run %s has no condition Archived", r.Name)
			Expect(c.Status).To(Equal(metav1.ConditionTrue), "run %s: %s", r.Name, c.Message)
			Expect(r.Status.Archive.Files).To(BeNumerically(">=", 4))
		}
		Expect(nightlies).To(Equal(4))
	}, SpecTimeout(6*runTimeout))

	It("as the tenant, a run cannot have its archiver read a Secret of another namespace", func(ctx SpecContext) {
		other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-archive-owner-"}}
		Expect(k8s.Create(ctx, other)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { _ = k8s.Delete(ctx, other) })
		// Good credentials, in a namespace the tenant has no rights in.
		Expect(k8s.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: other.Name, Name: "archive-admin"},
			StringData: map[string]string{v1alpha1.ArchiveAccessKeyID: access, v1alpha1.ArchiveSecretAccessKey: secret},
		})).To(Succeed())
		Expect(tenantMay(ctx, "get", "", "secrets", "", other.Name)).To(BeFalse())

		run := newRun("e2e-archive-steal", v1alpha1.SystemKafka, v1alpha1.ExistingCluster{BootstrapServers: kafka.Bootstrap()}, 0.1)
		run.Spec.Results = &v1alpha1.ResultsSpec{Archive: &v1alpha1.ArchiveSpec{
			URL: "s3://" + bucket + "/stolen", Endpoint: endpoint, PathStyle: true, CredentialsSecret: "archive-admin",
		}}
		Expect(asTenant().Create(ctx, run)).To(Succeed())
		waitForPhase(ctx, run, v1alpha1.PhaseSucceeded, runTimeout)
		// The archiver's pod is a pod of the tenant's namespace: the
		// kubelet finds no Secret archive-admin there, and the pod never
		// starts. The operator says so and keeps the results.
		Eventually(func(g Gomega) {
			got := getRun(ctx, run)
			c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionArchived)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Message).To(ContainSubstring(`secret "archive-admin" not found`))
		}).WithTimeout(2*time.Minute).WithPolling(2*time.Second).Should(Succeed(), func() string { return podSummary(testNS) })
		loc, err := archive.ParseLocation("s3://" + bucket + "/stolen")
		Expect(err).NotTo(HaveOccurred())
		store, err := archive.Open(ctx, loc, archive.S3Options{Endpoint: endpoint, PathStyle: true, AccessKeyID: access, SecretAccessKey: secret})
		Expect(err).NotTo(HaveOccurred())
		keys, err := store.List(ctx, "")
		Expect(err).NotTo(HaveOccurred())
		Expect(keys).To(BeEmpty(), "nothing was written with the other namespace's credentials")
		var cm corev1.ConfigMap
		Expect(k8s.Get(ctx, types.NamespacedName{Namespace: testNS, Name: workers.ResultsName(run)}, &cm)).To(Succeed())
	}, SpecTimeout(runTimeout+3*time.Minute))
})
