package controllers

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
	"github.com/streambench/streambench-operator/internal/provision/workers"
)

// securedManagedKafkaSpecs run inside the Ordered container that installs
// Strimzi's CRDs (lifecycle_test.go): a managed Kafka run with
// spec.cluster.managed.security, the suite playing Strimzi's cluster and
// User Operators.
func securedManagedKafkaSpecs() {
	It("deploys a TLS SCRAM listener and a KafkaUser, waits for the User Operator, mounts the CA and the password only, and deletes the KafkaUser", func() {
		ns := newNamespace()
		run := validRun(ns, v1alpha1.SystemKafka)
		run.Spec.Cluster.Managed.Security = &v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthScramSHA512}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		waitPhase(run, v1alpha1.PhaseProvisioning)
		run = getRun(run)
		cluster, userName := strimzi.ClusterName(run), strimzi.UserName(run)

		kafka := kafkaObject(run)
		Eventually(func() error { return k8sClient.Get(ctx, client.ObjectKeyFromObject(kafka), kafka) }).Should(Succeed())
		listeners, _, _ := unstructured.NestedSlice(kafka.Object, "spec", "kafka", "listeners")
		Expect(listeners).To(Equal([]any{map[string]any{"name": "tls", "port": int64(9093), "type": "internal", "tls": true,
			"authentication": map[string]any{"type": "scram-sha-512"}}}))
		eo, _, _ := unstructured.NestedMap(kafka.Object, "spec", "entityOperator")
		Expect(eo).To(Equal(map[string]any{"userOperator": map[string]any{}}), "the User Operator alone")

		user := &unstructured.Unstructured{}
		user.SetGroupVersionKind(strimzi.KafkaUserGVK)
		user.SetNamespace(ns)
		user.SetName(userName)
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(user), user)).To(Succeed())
		Expect(user.GetLabels()).To(HaveKeyWithValue("strimzi.io/cluster", cluster))
		Expect(user.GetOwnerReferences()).To(HaveLen(1))
		Expect(user.GetOwnerReferences()[0].UID).To(Equal(run.UID))
		auth, _, _ := unstructured.NestedString(user.Object, "spec", "authentication", "type")
		Expect(auth).To(Equal("scram-sha-512"))

		By("the Kafka is Ready with its tls listener: the run still waits for the KafkaUser")
		bootstrap := cluster + "-kafka-bootstrap." + ns + ".svc:9093"
		kafka.Object["status"] = map[string]any{
			"observedGeneration": kafka.GetGeneration(),
			"conditions":         []any{map[string]any{"type": "Ready", "status": "True"}},
			"listeners":          []any{map[string]any{"name": "tls", "bootstrapServers": bootstrap}},
		}
		Expect(k8sClient.Status().Update(ctx, kafka)).To(Succeed())
		secret(ns, cluster+"-cluster-ca-cert", map[string]string{"ca.crt": caPEM, "ca.p12": "binary", "ca.password": caP12Password})
		Eventually(func() string { return getRun(run).Status.Message }).Should(ContainSubstring(
			"KafkaUser " + userName + ": no Ready condition yet"))
		Consistently(func() v1alpha1.Phase { return getRun(run).Status.Phase }, "2s").Should(Equal(v1alpha1.PhaseProvisioning))
		noJobs(run)

		By("the User Operator writes the Secret and marks the KafkaUser Ready")
		secret(ns, userName, map[string]string{"password": scramPassword, "sasl.jaas.config": jaasConfig})
		user.Object["status"] = map[string]any{
			"observedGeneration": user.GetGeneration(), "username": userName, "secret": userName,
			"conditions": []any{map[string]any{"type": "Ready", "status": "True"}},
		}
		Expect(k8sClient.Status().Update(ctx, user)).To(Succeed())

		running := waitPhase(run, v1alpha1.PhaseRunning)
		Expect(running.Status.Brokers.BootstrapServers).To(Equal(bootstrap))
		coordinator := getJob(run, workers.CoordinatorName(run))
		Expect(mountedSecretKeys(coordinator)).To(ConsistOf(cluster+"-cluster-ca-cert/ca.crt", userName+"/password"))
		Expect(mountedSecretKeys(getJob(run, workers.WorkerJobName(run)))).To(ConsistOf(cluster+"-cluster-ca-cert/ca.crt", userName+"/password"))
		sec := securityArg(coordinator)
		Expect(sec.TLS.CAFile).To(Equal("/etc/streambench/secrets/" + cluster + "-cluster-ca-cert/ca.crt"))
		Expect(sec.Mechanism).To(Equal("SCRAM-SHA-512"))
		Expect(sec.Username).To(Equal(userName))
		Expect(sec.PasswordFile).To(Equal("/etc/streambench/secrets/" + userName + "/password"))
		noSecretValues(run, scramPassword, caPEM, jaasConfig, caP12Password)

		runToSucceeded(run)
		Eventually(gone(user)).Should(BeTrue(), "teardown deletes the KafkaUser")
		Eventually(gone(kafka)).Should(BeTrue())
	})

	It("runs mutual TLS with the KafkaUser's certificate and key", func() {
		ns := newNamespace()
		run := validRun(ns, v1alpha1.SystemKafka)
		run.Spec.Cluster.Managed.Security = &v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthTLS}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		waitPhase(run, v1alpha1.PhaseProvisioning)
		run = getRun(run)
		cluster, userName := strimzi.ClusterName(run), strimzi.UserName(run)
		kafka := kafkaObject(run)
		user := &unstructured.Unstructured{}
		user.SetGroupVersionKind(strimzi.KafkaUserGVK)
		user.SetNamespace(ns)
		user.SetName(userName)
		Eventually(func() error { return k8sClient.Get(ctx, client.ObjectKeyFromObject(user), user) }).Should(Succeed())
		auth, _, _ := unstructured.NestedString(user.Object, "spec", "authentication", "type")
		Expect(auth).To(Equal("tls"))
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(kafka), kafka)).To(Succeed())
		kafka.Object["status"] = map[string]any{
			"observedGeneration": kafka.GetGeneration(),
			"conditions":         []any{map[string]any{"type": "Ready", "status": "True"}},
			"listeners":          []any{map[string]any{"name": "tls", "bootstrapServers": cluster + "-kafka-bootstrap." + ns + ".svc:9093"}},
		}
		Expect(k8sClient.Status().Update(ctx, kafka)).To(Succeed())
		secret(ns, cluster+"-cluster-ca-cert", map[string]string{"ca.crt": caPEM})
		secret(ns, userName, map[string]string{"ca.crt": caPEM, "user.crt": "c", "user.key": "k", "user.p12": "p", "user.password": caP12Password})
		user.Object["status"] = map[string]any{
			"observedGeneration": user.GetGeneration(), "username": "CN=" + userName, "secret": userName,
			"conditions": []any{map[string]any{"type": "Ready", "status": "True"}},
		}
		Expect(k8sClient.Status().Update(ctx, user)).To(Succeed())

		waitPhase(run, v1alpha1.PhaseRunning)
		coordinator := getJob(run, workers.CoordinatorName(run))
		Expect(mountedSecretKeys(coordinator)).To(ConsistOf(cluster+"-cluster-ca-cert/ca.crt", userName+"/user.crt", userName+"/user.key"))
		sec := securityArg(coordinator)
		Expect(sec.Mechanism).To(BeEmpty())
		Expect(sec.TLS.CertFile).To(Equal("/etc/streambench/secrets/" + userName + "/user.crt"))
		Expect(sec.TLS.KeyFile).To(Equal("/etc/streambench/secrets/" + userName + "/user.key"))
	})
}
