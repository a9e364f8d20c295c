//go:build e2e

package e2e

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/provision/workers"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/testcerts"
)

// An existing Kafka that accepts only SASL_SSL, as MSK and Confluent Cloud
// do: the run's clients trust the brokers' CA and log in with SCRAM, both
// from a Secret the run names; the values reach no status, event, Job or
// log.
var _ = Describe("an existing Kafka with SASL_SSL and SCRAM", Label("security"), Ordered, func() {
	const (
		user       = "bench"
		password   = "e2e-Scram-Pw-73b1" // looked for everywhere it must not be
		secretName = "kafka-sasl-ssl"
	)
	var (
		kafka     *localbrokers.Kafka
		bootstrap string
	)

	BeforeAll(func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		ca, err := testcerts.NewCA(dir, "e2e-kafka")
		Expect(err).NotTo(HaveOccurred())
		cert, err := ca.Issue("broker", testcerts.Options{Names: []string{brokerHost}})
		Expect(err).NotTo(HaveOccurred())
		By("starting one Kafka broker on the host with a SASL_SSL listener (SCRAM-SHA-512), listening on " + brokerHost)
		kafka, err = localbrokers.StartKafka(ctx, localbrokers.KafkaOptions{Brokers: 1, Host: brokerHost, Log: logf,
			Listeners: []localbrokers.KafkaListener{{
				Name: "SASL", Protocol: localbrokers.ListenerSASLSSL, CertFile: cert.CertFile, KeyFile: cert.KeyFile,
				Mechanisms: []string{localbrokers.MechanismSCRAMSHA512},
				Users:      []localbrokers.KafkaUser{{Name: user, Password: password}},
			}}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(kafka.Stop()).To(Succeed()) })
		bootstrap, err = kafka.ListenerBootstrap("SASL")
		Expect(err).NotTo(HaveOccurred())

		By("creating the Secret with the CA and the password, as a user would with kubectl create secret")
		kubectl(nil, "-n", testNS, "create", "secret", "generic", secretName,
			"--from-file=ca.crt="+ca.CertFile, "--from-literal=password="+password, "--from-literal=unused=not-mounted")
	}, NodeTimeout(6*time.Minute))

	securedRun := func(prefix, passwordKey string) *v1alpha1.BenchmarkRun {
		run := newRun(prefix, v1alpha1.SystemKafka, v1alpha1.ExistingCluster{
			BootstrapServers: bootstrap,
			TLS:              &v1alpha1.ClientTLS{CA: &v1alpha1.SecretKeyRef{Name: secretName, Key: "ca.crt"}},
			Authentication: &v1alpha1.ClientAuthentication{Mechanism: v1alpha1.AuthScramSHA512, Username: user,
				Password: &v1alpha1.SecretKeyRef{Name: secretName, Key: passwordKey}},
		}, 0.5)
		// One broker: replication factor 1, acknowledged by its leader.
		run.Spec.Durability = &v1alpha1.DurabilitySpec{
			Replication: &v1alpha1.ReplicationDurability{Mode: v1alpha1.ReplicationSync, Replicas: 1, AckReplicas: 1},
			Local:       &v1alpha1.LocalDurability{Mode: v1alpha1.LocalAsync},
		}
		return run
	}

	It("runs a workload to Succeeded over SASL_SSL, and no secret value leaves the Secret", func(ctx SpecContext) {
		run := securedRun("e2e-sasl-ssl", "password")
		// As the tenant (tenancy_test.go): a user with edit here alone runs
		// against a secured cluster.
		Expect(asTenant().Create(ctx, run)).To(Succeed())
		got := waitForPhase(ctx, run, v1alpha1.PhaseSucceeded, runTimeout)
		expectResults(ctx, got, v1alpha1.SystemKafka)

		By("the results say how the clients reached the brokers")
		var cm corev1.ConfigMap
		Expect(k8s.Get(ctx, types.NamespacedName{Namespace: testNS, Name: got.Status.ResultsRef}, &cm)).To(Succeed())
		sum, err := results.Read(&cm)
		Expect(err).NotTo(HaveOccurred())
		Expect(sum.Security).NotTo(BeNil(), "summary.json has the security")
		Expect(sum.Security.Protocol).To(Equal("SASL_SSL"))
		Expect(sum.Security.Mechanism).To(Equal("SCRAM-SHA-512"))
		Expect(sum.Security.TLSVersion).To(HavePrefix("TLS 1."))
		Expect(sum.Security.Verification).To(Equal("full"))
		GinkgoWriter.Printf("security: %+v\n", *sum.Security)

		By("the Jobs mount only the keys the run names, and pass paths, never values")
		for _, name := range []string{workers.CoordinatorName(got), workers.WorkerJobName(got)} {
			var job batchv1.Job
			err := k8s.Get(ctx, types.NamespacedName{Namespace: testNS, Name: name}, &job)
			if err != nil {
				continue // removed by the teardown policy; the run's pods were checked by running
			}
			for _, v := range job.Spec.Template.Spec.Volumes {
				if v.Secret != nil && v.Secret.SecretName == secretName {
					var keys []string
					for _, it := range v.Secret.Items {
						keys = append(keys, it.Key)
					}
					Expect(keys).To(ConsistOf("ca.crt", "password"), "Job %s mounts only the keys the run uses", name)
				}
			}
			js, err := yaml.Marshal(job)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(js)).NotTo(ContainSubstring(password), "Job %s", name)
		}

		By("no secret value in the run, its events, its results or its pods' logs")
		stored, err := yaml.Marshal(getRun(ctx, got))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(stored)).NotTo(ContainSubstring(password))
		var events corev1.EventList
		Expect(k8s.List(ctx, &events, client.InNamespace(testNS))).To(Succeed())
		for _, e := range events.Items {
			Expect(e.Message).NotTo(ContainSubstring(password), "event %s", e.Name)
		}
		for k, v := range cm.Data {
			Expect(v).NotTo(ContainSubstring(password), "results ConfigMap key %s", k)
		}
		Expect(runLogs(got)).NotTo(ContainSubstring(password))
	}, SpecTimeout(runTimeout+time.Minute))

	It("fails fast, naming the user and the fix, when the password is wrong", func(ctx SpecContext) {
		kubectl(nil, "-n", testNS, "create", "secret", "generic", secretName+"-wrong", "--from-literal=password=not-the-password")
		// The same CA, from the first Secret: only the password differs.
		run := securedRun("e2e-sasl-bad", "password")
		run.Spec.Cluster.Existing.Authentication.Password.Name = secretName + "-wrong"
		run.Spec.Cluster.Existing.TLS.CA.Name = secretName
		created := time.Now()
		Expect(k8s.Create(ctx, run)).To(Succeed())
		got := waitForPhase(ctx, run, v1alpha1.PhaseFailed, 4*time.Minute)
		GinkgoWriter.Printf("failed %s after creation: %s\n", time.Since(created).Round(time.Second), got.Status.Message)
		Expect(got.Status.Message).To(ContainSubstring("user " + user))
		Expect(got.Status.Message).To(ContainSubstring("password"))
		Expect(strings.Contains(got.Status.Message, "not-the-password")).To(BeFalse(), "the wrong password itself is not quoted")
	}, SpecTimeout(5*time.Minute))

	It("refuses a run whose Secret does not exist before anything starts", func(ctx SpecContext) {
		run := securedRun("e2e-sasl-nosecret", "password")
		run.Spec.Cluster.Existing.Authentication.Password.Name = "no-such-secret"
		Expect(k8s.Create(ctx, run)).To(Succeed())
		got := waitForPhase(ctx, run, v1alpha1.PhaseFailed, time.Minute)
		Expect(got.Status.Message).To(ContainSubstring("no-such-secret"))
		Expect(got.Status.Message).To(ContainSubstring("kubectl create secret"))
		var jobs batchv1.JobList
		Expect(k8s.List(ctx, &jobs, client.InNamespace(testNS), client.MatchingLabels{workers.LabelRun: got.Name})).To(Succeed())
		Expect(jobs.Items).To(BeEmpty(), "no Job was made for a run refused in Pending")
	}, SpecTimeout(2*time.Minute))
})
