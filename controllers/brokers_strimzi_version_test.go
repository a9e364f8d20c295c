package controllers

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
)

// strimziOperator creates Strimzi's own cluster operator Deployment
// (testdata/upstream, Strimzi 1.2.0's install files) in namespace, with
// STRIMZI_KAFKA_IMAGES as given, and removes it when the spec ends: every
// managed Kafka run of the suite would read it. No pod runs; the
// controller reads only the Deployment.
func strimziOperator(namespace, kafkaImages string) *appsv1.Deployment {
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "upstream", "strimzi-"+strimzi.StrimziVersion, "060-Deployment-strimzi-cluster-operator.yaml"))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	dep := &appsv1.Deployment{}
	ExpectWithOffset(1, yaml.UnmarshalStrict(raw, dep)).To(Succeed())
	dep.Namespace = namespace
	env := dep.Spec.Template.Spec.Containers[0].Env
	found := false
	for i := range env {
		if env[i].Name == strimzi.KafkaImagesEnv {
			env[i].Value, found = kafkaImages, true
		}
	}
	ExpectWithOffset(1, found).To(BeTrue(), "Strimzi's Deployment sets %s", strimzi.KafkaImagesEnv)
	ExpectWithOffset(1, k8sClient.Create(ctx, dep)).To(Succeed())
	DeferCleanup(func() {
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, dep))).To(Succeed())
		Eventually(gone(dep)).Should(BeTrue())
	})
	return dep
}

// versionCondition is the run's BrokerVersionResolved condition, once set.
func versionCondition(run *v1alpha1.BenchmarkRun) *metav1.Condition {
	var cond *metav1.Condition
	EventuallyWithOffset(1, func() *metav1.Condition {
		cond = meta.FindStatusCondition(getRun(run).Status.Conditions, v1alpha1.ConditionBrokerVersionResolved)
		return cond
	}).ShouldNot(BeNil())
	return cond
}

// kafkaVersionSpecs run inside the Ordered container that installs
// Strimzi's CRDs (lifecycle_test.go): the Kafka version of a managed run
// comes from the installed Strimzi's cluster operator.
func kafkaVersionSpecs() {
	It("without a Strimzi cluster operator to read, assumes Strimzi 1.2.0's Kafka 4.3.1, says so, and leaves the version to Strimzi", func() {
		installStrimziCRDs() // again, so that the spec runs alone too
		ns := newNamespace()
		run := validRun(ns, v1alpha1.SystemKafka)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		got := waitPhase(run, v1alpha1.PhaseProvisioning)
		Expect(got.Status.Durability.BrokerVersion).To(Equal(strimzi.DefaultKafkaVersion))
		cond := versionCondition(run)
		Expect(cond.Status).To(Equal(metav1.ConditionUnknown))
		Expect(cond.Reason).To(Equal(strimzi.ReasonOperatorNotFound))
		Expect(cond.Message).To(HavePrefix("Kafka 4.3.1 assumed"))
		Expect(cond.Message).To(ContainSubstring("no Deployment in the cluster runs a Strimzi cluster operator (a container with env STRIMZI_KAFKA_IMAGES)"))
		Eventually(eventReasons(ns, run.Name)).Should(ContainElement(HavePrefix("Warning/" + strimzi.ReasonOperatorNotFound + ": Kafka 4.3.1 assumed")))

		kafka := kafkaObject(run)
		Eventually(func() error { return k8sClient.Get(ctx, client.ObjectKeyFromObject(kafka), kafka) }).Should(Succeed())
		_, named, _ := unstructured.NestedString(kafka.Object, "spec", "kafka", "version")
		Expect(named).To(BeFalse(), "the Kafka names no version: Strimzi's default, as before")
		Expect(k8sClient.Delete(ctx, run)).To(Succeed())
	})

	It("takes the newest Kafka the installed Strimzi supports for an unpinned run, and names it in the Kafka", func() {
		installStrimziCRDs()
		strimziNS := newNamespace()
		strimziOperator(strimziNS, "4.2.0=quay.io/strimzi/kafka:1.2.0-kafka-4.2.0\n4.2.1=quay.io/strimzi/kafka:1.2.0-kafka-4.2.1\n")

		By("an unpinned run takes 4.2.1, the newest listed, not 4.3.1")
		ns := newNamespace()
		run := validRun(ns, v1alpha1.SystemKafka)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		got := waitPhase(run, v1alpha1.PhaseProvisioning)
		d := got.Status.Durability
		Expect(d.BrokerVersion).To(Equal("4.2.1"))
		Expect(d.Verification).To(Equal(v1alpha1.NotVerified), "the experiment does not cover 4.2.1")
		Expect(d.Explanation).To(ContainSubstring("does not cover Kafka 4.2.1"))
		cond := versionCondition(run)
		Expect(cond.Status).To(Equal(metav1.ConditionTrue))
		Expect(cond.Reason).To(Equal(strimzi.ReasonNewestSupported))
		Expect(cond.Message).To(Equal("Kafka 4.2.1, the newest that Strimzi in namespace " + strimziNS + " supports (4.2.0, 4.2.1)"))
		Eventually(eventReasons(ns, run.Name)).Should(ContainElement("Normal/Provisioning: deploying Kafka 4.2.1 with Strimzi"))

		By("the Kafka names the same version, so the brokers are those the durability is stated for")
		kafka := kafkaObject(run)
		Eventually(func() error { return k8sClient.Get(ctx, client.ObjectKeyFromObject(kafka), kafka) }).Should(Succeed())
		version, _, _ := unstructured.NestedString(kafka.Object, "spec", "kafka", "version")
		Expect(version).To(Equal("4.2.1"))
		strimziReady(run)
		running := waitPhase(run, v1alpha1.PhaseRunning)
		Expect(running.Status.Testbed.Topology.Version).To(Equal("4.2.1"), "status.testbed records the version deployed")
		Expect(k8sClient.Delete(ctx, run)).To(Succeed())
	})

	It("fails at once a run pinned to a Kafka the installed Strimzi does not list, and takes one it lists", func() {
		installStrimziCRDs()
		strimziNS := newNamespace()
		strimziOperator(strimziNS, "4.2.0=quay.io/strimzi/kafka:1.2.0-kafka-4.2.0\n4.2.1=quay.io/strimzi/kafka:1.2.0-kafka-4.2.1\n")

		By("a run pinned to 4.3.1 fails before anything is deployed, naming the field, the list and the fix")
		ns := newNamespace()
		pinned := validRun(ns, v1alpha1.SystemKafka)
		pinned.Spec.Cluster.Managed.Version = "4.3.1"
		Expect(k8sClient.Create(ctx, pinned)).To(Succeed())
		failed := waitPhase(pinned, v1alpha1.PhaseFailed)
		want := "spec.cluster.managed.version 4.3.1 is not a Kafka version that Strimzi in namespace " + strimziNS + " deploys: " +
			"it supports 4.2.0, 4.2.1 (STRIMZI_KAFKA_IMAGES of its cluster operator); " +
			"set spec.cluster.managed.version to one of them, or remove it for the newest (4.2.1)"
		Expect(failed.Status.Message).To(Equal(want))
		cond := versionCondition(pinned)
		Expect(cond.Status).To(Equal(metav1.ConditionFalse))
		Expect(cond.Reason).To(Equal(strimzi.ReasonUnsupportedVersion))
		Expect(meta.FindStatusCondition(failed.Status.Conditions, v1alpha1.ConditionFailed).Reason).To(Equal(strimzi.ReasonUnsupportedVersion))
		Expect(failed.Status.Durability).To(BeNil(), "no durability is stated for a version that will not run")
		Expect(failed.Status.StartTime).To(BeNil(), "nothing was deployed")
		err := k8sClient.Get(ctx, client.ObjectKeyFromObject(kafkaObject(pinned)), kafkaObject(pinned))
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no Kafka: %v", err)

		By("a run pinned to a version it lists takes it")
		ok := validRun(ns, v1alpha1.SystemKafka)
		ok.Spec.Cluster.Managed.Version = "4.2.0"
		Expect(k8sClient.Create(ctx, ok)).To(Succeed())
		Expect(waitPhase(ok, v1alpha1.PhaseProvisioning).Status.Durability.BrokerVersion).To(Equal("4.2.0"))
		Expect(versionCondition(ok).Reason).To(Equal(strimzi.ReasonPinned))
		Expect(k8sClient.Delete(ctx, ok)).To(Succeed())
	})

	It("finds Strimzi in the run's namespace under the chart's watchNamespaces role, and says why when it is elsewhere", func() {
		runNS, strimziNS := newNamespace(), newNamespace()
		strimziOperator(strimziNS, "4.3.1=quay.io/strimzi/kafka:1.2.0-kafka-4.3.1")
		// What the chart grants per watched namespace (a Role, no
		// ClusterRole for Deployments): list in the run's namespace only.
		Expect(k8sClient.Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: runNS, Name: "watched"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list", "watch"}}},
		})).To(Succeed())
		Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: runNS, Name: "watched"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "watched"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "watch-namespaces-" + runNS}},
		})).To(Succeed())
		user, err := testEnv.AddUser(envtest.User{Name: "watch-namespaces-" + runNS}, cfg)
		Expect(err).NotTo(HaveOccurred())
		c, err := client.New(user.Config(), client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		r := &BenchmarkRunReconciler{Client: c}

		ops, notFound, err := r.strimziOperators(ctx, runNS)
		Expect(err).NotTo(HaveOccurred())
		Expect(ops).To(BeEmpty())
		Expect(notFound).To(Equal("no Deployment in namespace " + runNS + " (the operator's role does not let it list Deployments in other namespaces, as under the chart's watchNamespaces) " +
			"runs a Strimzi cluster operator (a container with env STRIMZI_KAFKA_IMAGES)"))

		strimziOperator(runNS, "4.2.0=quay.io/strimzi/kafka:1.2.0-kafka-4.2.0")
		Eventually(func(g Gomega) {
			ops, _, err := r.strimziOperators(ctx, runNS)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ops).To(HaveLen(1))
			g.Expect(ops[0].String()).To(Equal(runNS + "/" + strimzi.ClusterOperatorName))
			g.Expect(ops[0].Versions).To(Equal(strimzi.KafkaVersions{"4.2.0"}))
		}).Should(Succeed())
	})
}
