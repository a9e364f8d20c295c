package controllers

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
	"github.com/streambench/streambench-operator/internal/provision/workers"
	"github.com/streambench/streambench-operator/internal/tenancy"
)

// Values that must never leave their Secrets: not into status, events, the
// Jobs' args or env.
const (
	scramPassword = "pw-7f2a9c-never-shown"
	caPEM         = "-----BEGIN CERTIFICATE-----\nMIIB-ca-7f2a9c-never-shown\n-----END CERTIFICATE-----\n"
	jaasConfig    = `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="pw-7f2a9c-never-shown";`
	caP12Password = "p12-7f2a9c-never-shown"
)

func secret(ns, name string, data map[string]string) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	ExpectWithOffset(1, k8sClient.Create(ctx, s)).To(Succeed())
}

// scramOverTLS is an existing Kafka run with TLS (the CA in Secret
// kafka-ca) and SCRAM-SHA-512 (alice's password in Secret alice).
func scramOverTLS(ns string) *v1alpha1.BenchmarkRun {
	run := existingKafkaRun(ns)
	e := run.Spec.Cluster.Existing
	e.BootstrapServers = "kafka.example:9093"
	e.TLS = &v1alpha1.ClientTLS{CA: &v1alpha1.SecretKeyRef{Name: "kafka-ca", Key: "ca.crt"}}
	e.Authentication = &v1alpha1.ClientAuthentication{Mechanism: v1alpha1.AuthScramSHA512, Username: "alice",
		Password: &v1alpha1.SecretKeyRef{Name: "alice", Key: "password"}}
	return run
}

// runEvents are the notes of the run's events, as "Type/Reason: note".
func runEvents(g Gomega, run *v1alpha1.BenchmarkRun) []string {
	var events eventsv1.EventList
	g.Expect(k8sClient.List(ctx, &events, client.InNamespace(run.Namespace))).To(Succeed())
	var out []string
	for _, e := range events.Items {
		if e.Regarding.Name == run.Name {
			out = append(out, e.Type+"/"+e.Reason+": "+e.Note)
		}
	}
	return out
}

// failedWith waits for the run to fail with reason and returns its message;
// a Warning event says the same.
func failedWith(run *v1alpha1.BenchmarkRun, reason string) string {
	failed := waitPhase(run, v1alpha1.PhaseFailed)
	ExpectWithOffset(1, meta.FindStatusCondition(failed.Status.Conditions, v1alpha1.ConditionFailed).Reason).To(Equal(reason))
	EventuallyWithOffset(1, func(g Gomega) {
		g.Expect(runEvents(g, run)).To(ContainElement("Warning/" + reason + ": " + failed.Status.Message))
	}).Should(Succeed())
	return failed.Status.Message
}

// noSecretValues says no secret value reached the run's status, its
// events or its Jobs, in clear or base64.
func noSecretValues(run *v1alpha1.BenchmarkRun, values ...string) {
	var seen []string
	b, err := json.Marshal(getRun(run).Status)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	seen = append(seen, string(b))
	Eventually(func(g Gomega) { seen = append(seen, runEvents(g, run)...) }).Should(Succeed())
	var jobs batchv1.JobList
	ExpectWithOffset(1, k8sClient.List(ctx, &jobs, client.InNamespace(run.Namespace))).To(Succeed())
	b, err = json.Marshal(jobs)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	seen = append(seen, string(b))
	all := strings.Join(seen, "\n")
	for _, v := range values {
		ExpectWithOffset(1, all).NotTo(ContainSubstring(v))
		ExpectWithOffset(1, all).NotTo(ContainSubstring(base64.StdEncoding.EncodeToString([]byte(v))))
	}
}

// mountedSecretKeys are the Secret keys a pod mounts, as "secret/key", and
// whether every such volume is read-only with mode 0440.
func mountedSecretKeys(job *batchv1.Job) []string {
	pod := job.Spec.Template.Spec
	readOnly := map[string]bool{}
	for _, m := range pod.Containers[0].VolumeMounts {
		readOnly[m.Name] = m.ReadOnly
	}
	var keys []string
	for _, v := range pod.Volumes {
		if s := v.Secret; s != nil {
			ExpectWithOffset(1, readOnly[v.Name]).To(BeTrue(), "Secret %s mounted writable", s.SecretName)
			ExpectWithOffset(1, *s.DefaultMode).To(Equal(int32(0o440)))
			for _, it := range s.Items {
				keys = append(keys, s.SecretName+"/"+it.Key)
			}
		}
	}
	return keys
}

func securityArg(job *batchv1.Job) driver.Security {
	var sec driver.Security
	ExpectWithOffset(1, json.Unmarshal([]byte(coordinatorArg(job, "security-json")), &sec)).To(Succeed())
	return sec
}

var _ = Describe("a run against a secured existing cluster", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("fails in Pending, naming the Secret that does not exist and how to create it", func() {
		secret(ns, "kafka-ca", map[string]string{"ca.crt": caPEM})
		run := scramOverTLS(ns)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		msg := failedWith(run, ReasonSecretMissing)
		Expect(msg).To(Equal("spec.cluster.existing.authentication.password: Secret alice not found in namespace " + ns +
			"; create it (kubectl create secret generic alice -n " + ns + " --from-file=password=FILE), then create the run again"))
		_, provisioned := getRun(run).Status.EnteredAt(v1alpha1.PhaseProvisioning)
		Expect(provisioned).To(BeFalse(), "refused before provisioning")
		noJobs(run)
	})

	// The refusal names the key asked for and the Secret, never the
	// Secret's other keys (issue 58): whoever may create a run must not
	// learn through it what any Secret of the namespace holds.
	It("fails in Pending, naming the missing key and the Secret, never the Secret's other keys or their values", func() {
		secret(ns, "kafka-ca", map[string]string{"ca.crt": caPEM})
		secret(ns, "alice", map[string]string{"sasl.jaas.config": jaasConfig, "db-root-password": scramPassword})
		run := scramOverTLS(ns)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		msg := failedWith(run, ReasonSecretKeyMissing)
		Expect(msg).To(Equal("spec.cluster.existing.authentication.password.key: Secret alice has no key password; " +
			"set it to the key that holds the file (kubectl describe secret alice -n " + ns + " lists the Secret's keys, for those who may read it), " +
			"or create the Secret with the key (kubectl create secret generic alice -n " + ns + " --from-file=password=FILE)"))
		Expect(msg).NotTo(ContainSubstring("sasl.jaas.config"))
		Expect(msg).NotTo(ContainSubstring("db-root-password"))
		noJobs(run)
		noSecretValues(run, scramPassword, jaasConfig, caPEM, "sasl.jaas.config", "db-root-password")
	})

	It("fails in Pending on an empty key", func() {
		secret(ns, "kafka-ca", map[string]string{"ca.crt": ""})
		secret(ns, "alice", map[string]string{"password": scramPassword})
		run := scramOverTLS(ns)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		Expect(failedWith(run, ReasonSecretKeyMissing)).To(HavePrefix("spec.cluster.existing.tls.ca: key ca.crt of Secret kafka-ca is empty"))
		noJobs(run)
	})

	It("mounts only the keys it reads into the coordinator and the workers, and passes their paths, not their values", func() {
		// Secrets as people have them: more keys than the run reads.
		secret(ns, "kafka-ca", map[string]string{"ca.crt": caPEM, "ca.p12": "binary", "ca.password": caP12Password})
		secret(ns, "alice", map[string]string{"password": scramPassword, "sasl.jaas.config": jaasConfig})
		run := scramOverTLS(ns)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		running := waitPhase(run, v1alpha1.PhaseRunning)
		Expect(running.Status.Brokers.BootstrapServers).To(Equal("kafka.example:9093"))

		coordinator := getJob(run, workers.CoordinatorName(run))
		workerJob := getJob(run, workers.WorkerJobName(run))
		for _, job := range []*batchv1.Job{coordinator, workerJob} {
			Expect(mountedSecretKeys(job)).To(ConsistOf("kafka-ca/ca.crt", "alice/password"), job.Name)
			Expect(*job.Spec.Template.Spec.SecurityContext.FSGroup).To(Equal(int64(workers.SecretGroup)))
		}
		Expect(coordinatorArg(workerJob, "security-json")).To(BeEmpty(), "the workers get it from the coordinator")
		sec := securityArg(coordinator)
		Expect(sec.TLS.CAFile).To(Equal("/etc/streambench/secrets/kafka-ca/ca.crt"))
		Expect(sec.Mechanism).To(Equal("SCRAM-SHA-512"))
		Expect(sec.Username).To(Equal("alice"))
		Expect(sec.PasswordFile).To(Equal("/etc/streambench/secrets/alice/password"))

		runToSucceeded(run)
		noSecretValues(run, scramPassword, caPEM, jaasConfig, caP12Password)
	})

	// The sample's comments say which Secrets to create; with exactly
	// those, it runs, and its pods mount exactly those keys.
	It("runs config/samples/run-existing-kafka-sasl-ssl.yaml with the Secrets its comments create", func() {
		data, err := os.ReadFile(filepath.Join("..", "config", "samples", "run-existing-kafka-sasl-ssl.yaml"))
		Expect(err).NotTo(HaveOccurred())
		var want []string
		for _, m := range regexp.MustCompile(`(?m)^#\s+kubectl create secret generic (\S+) --from-file=([^=\s]+)=`).FindAllStringSubmatch(string(data), -1) {
			secret(ns, m[1], map[string]string{m[2]: "value of " + m[1] + "/" + m[2]})
			want = append(want, m[1]+"/"+m[2])
		}
		Expect(want).To(ConsistOf("kafka-ca/ca.crt", "bench-scram/password"))
		var run v1alpha1.BenchmarkRun
		Expect(yaml.UnmarshalStrict(data, &run)).To(Succeed())
		run.Namespace = ns
		Expect(k8sClient.Create(ctx, &run)).To(Succeed())
		waitPhase(&run, v1alpha1.PhaseRunning)
		Expect(mountedSecretKeys(getJob(&run, workers.CoordinatorName(&run)))).To(ConsistOf(want))
		Expect(mountedSecretKeys(getJob(&run, workers.WorkerJobName(&run)))).To(ConsistOf(want))
	})

	It("refuses to trust a Strimzi cluster's CA from another namespace, saying how to copy it", func() {
		run := validRun(ns, v1alpha1.SystemKafka)
		run.Spec.Cluster = v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{
			StrimziCluster: &v1alpha1.StrimziClusterRef{Name: "prod", Namespace: "kafka"},
			TLS:            &v1alpha1.ClientTLS{},
		}}
		// Its owner lets runs read the cluster (controllers/tenancy_test.go),
		// so what is refused is the CA alone.
		annotateNamespace("kafka", tenancy.AllowRunsFrom, "*")
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		msg := failedWith(run, ReasonSecurityInvalid)
		Expect(msg).To(ContainSubstring("spec.cluster.existing.tls.ca is not set, so the run would trust the CA of Kafka prod, Secret prod-cluster-ca-cert (key ca.crt), which Strimzi writes in the Kafka's namespace kafka"))
		Expect(msg).To(ContainSubstring(`kubectl create secret generic prod-cluster-ca-cert -n ` + ns +
			` --from-file=ca.crt=<(kubectl get secret prod-cluster-ca-cert -n kafka -o jsonpath='{.data.ca\.crt}' | base64 -d)`))
		Expect(msg).To(ContainSubstring("set spec.cluster.existing.tls.ca to {name: prod-cluster-ca-cert, key: ca.crt}, or create the run in namespace kafka"))
		noJobs(run)
	})
})

// strimziKafka is a Kafka as Strimzi's examples have it, Ready, with the
// listeners given (each's bootstrap in status on its own port).
func strimziKafka(ns, name string, listeners ...map[string]any) {
	kafka := &unstructured.Unstructured{}
	kafka.SetGroupVersionKind(strimzi.KafkaGVK)
	kafka.SetNamespace(ns)
	kafka.SetName(name)
	var spec, status []any
	for _, l := range listeners {
		spec = append(spec, l)
		status = append(status, map[string]any{"name": l["name"],
			"bootstrapServers": name + "-kafka-bootstrap." + ns + ".svc:" + strings.TrimPrefix(l["name"].(string), "l")})
	}
	kafka.Object["spec"] = map[string]any{"kafka": map[string]any{"listeners": spec}}
	ExpectWithOffset(1, k8sClient.Create(ctx, kafka)).To(Succeed())
	kafka.Object["status"] = map[string]any{
		"observedGeneration": kafka.GetGeneration(),
		"conditions":         []any{map[string]any{"type": "Ready", "status": "True"}},
		"listeners":          status,
	}
	ExpectWithOffset(1, k8sClient.Status().Update(ctx, kafka)).To(Succeed())
}

// Listeners named after their port, so the bootstrap says which was taken.
func listener(port int64, tls bool, auth string) map[string]any {
	l := map[string]any{"name": "l" + strconv.FormatInt(port, 10), "port": port, "type": "internal", "tls": tls}
	if auth != "" {
		l["authentication"] = map[string]any{"type": auth}
	}
	return l
}

// securedStrimziSpecs run inside the Ordered container that installs
// Strimzi's CRDs (lifecycle_test.go).
func securedStrimziSpecs() {
	strimziRun := func(ns string) *v1alpha1.BenchmarkRun {
		run := validRun(ns, v1alpha1.SystemKafka)
		run.Spec.Cluster = v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{
			StrimziCluster: &v1alpha1.StrimziClusterRef{Name: "prod"},
			TLS:            &v1alpha1.ClientTLS{},
			Authentication: &v1alpha1.ClientAuthentication{StrimziKafkaUser: &v1alpha1.StrimziKafkaUserRef{
				SecretName: "bench", Type: v1alpha1.KafkaUserScramSHA512}},
		}}
		return run
	}

	It("waits for the Secrets Strimzi writes, then takes the TLS SCRAM listener and mounts the CA and the password only", func() {
		ns := newNamespace()
		strimziKafka(ns, "prod", listener(9092, false, ""), listener(9093, true, "tls"), listener(9094, true, "scram-sha-512"))
		run := strimziRun(ns)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		// Created with its KafkaUser: the User Operator has not written
		// the Secret yet, nor (a new cluster) the cluster operator its CA.
		Eventually(func() string { return getRun(run).Status.Message }).Should(
			Equal("waiting for Secret prod-cluster-ca-cert in namespace " + ns +
				" (spec.cluster.existing.tls.ca (the Strimzi cluster's CA, as spec.cluster.existing.strimziCluster names it)), which Strimzi writes with the CA of Kafka prod once its cluster operator has deployed it"))
		Expect(getRun(run).Status.Phase).To(Equal(v1alpha1.PhasePending))
		// As Strimzi writes them.
		secret(ns, "prod-cluster-ca-cert", map[string]string{"ca.crt": caPEM, "ca.p12": "binary", "ca.password": caP12Password})
		Eventually(func() string { return getRun(run).Status.Message }).Should(HavePrefix("waiting for Secret bench in namespace " + ns))
		secret(ns, "bench", map[string]string{"password": scramPassword, "sasl.jaas.config": jaasConfig})

		running := waitPhase(run, v1alpha1.PhaseRunning)
		Expect(running.Status.Brokers.BootstrapServers).To(Equal("prod-kafka-bootstrap." + ns + ".svc:9094"))
		coordinator := getJob(run, workers.CoordinatorName(run))
		Expect(mountedSecretKeys(coordinator)).To(ConsistOf("prod-cluster-ca-cert/ca.crt", "bench/password"))
		Expect(mountedSecretKeys(getJob(run, workers.WorkerJobName(run)))).To(ConsistOf("prod-cluster-ca-cert/ca.crt", "bench/password"))
		sec := securityArg(coordinator)
		Expect(sec.TLS.CAFile).To(Equal("/etc/streambench/secrets/prod-cluster-ca-cert/ca.crt"))
		Expect(sec.Username).To(Equal("bench"))
		Expect(sec.PasswordFile).To(Equal("/etc/streambench/secrets/bench/password"))
		noSecretValues(run, scramPassword, caPEM, jaasConfig, caP12Password)
	})

	It("fails at once when the Kafka has no listener for its clients, listing the listeners it has", func() {
		ns := newNamespace()
		strimziKafka(ns, "prod", listener(9092, false, ""), listener(9093, true, "tls"))
		secret(ns, "prod-cluster-ca-cert", map[string]string{"ca.crt": caPEM})
		secret(ns, "bench", map[string]string{"password": scramPassword})
		run := strimziRun(ns)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		msg := failedWith(run, "BrokersFailed")
		Expect(msg).To(ContainSubstring("Kafka " + ns + "/prod has no listener for a TLS client with SASL SCRAM-SHA-512"))
		Expect(msg).To(ContainSubstring("its spec.kafka.listeners: l9092 (internal, port 9092, tls: false, no authentication); l9093 (internal, port 9093, tls: true, authentication tls)"))
		Expect(msg).To(ContainSubstring("Add a listener with tls: true and authentication type scram-sha-512 to the Kafka"))
		noJobs(run)
	})

	It("says which keys each KafkaUser type has, never the keys the Secret has", func() {
		ns := newNamespace()
		strimziKafka(ns, "prod", listener(9094, true, "scram-sha-512"))
		secret(ns, "prod-cluster-ca-cert", map[string]string{"ca.crt": caPEM})
		// An mTLS KafkaUser's Secret.
		secret(ns, "bench", map[string]string{"ca.crt": caPEM, "user.crt": "c", "user.key": "k", "user.p12": "p", "user.password": caP12Password})
		run := strimziRun(ns)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		Expect(failedWith(run, ReasonSecretKeyMissing)).To(Equal(
			"spec.cluster.existing.authentication.strimziKafkaUser: Secret bench has no key password: " +
				"Strimzi writes key password for a KafkaUser of type scram-sha-512, and user.crt and user.key for one of type tls; " +
				"set spec.cluster.existing.authentication.strimziKafkaUser.type to the KafkaUser's spec.authentication.type"))
		noSecretValues(run, caPEM, caP12Password, "user.p12", "user.password")
	})
}
