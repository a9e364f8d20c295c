package controllers

import (
	"encoding/json"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/probe"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
	"github.com/streambench/streambench-operator/internal/provision/workers"
)

// javaNamespace is a namespace whose Java probe the test plays itself
// (the node probes are played by playTestbed).
func javaNamespace() string {
	ns := newNamespace()
	labelNamespace(ns, map[string]string{manualJavaLabel: "true"})
	return ns
}

// testbedOfCoordinator is the testbed the coordinator Job carries into
// summary.json.
func testbedOfCoordinator(run *v1alpha1.BenchmarkRun) v1alpha1.Testbed {
	var tb v1alpha1.Testbed
	for _, a := range getJob(run, workers.CoordinatorName(run)).Spec.Template.Spec.Containers[0].Args {
		if v, ok := strings.CutPrefix(a, "--testbed-json="); ok {
			ExpectWithOffset(1, json.Unmarshal([]byte(v), &tb)).To(Succeed())
		}
	}
	return tb
}

var _ = Describe("the brokers' Java", func() {
	It("is read by a Job on a broker pod's image and node before the load, recorded in status.testbed.topology and handed to the coordinator", func() {
		ns := javaNamespace()
		run := managedPulsarWithBrokerPods(ns, nil)
		broker := pulsar.ReleaseName(run) + "-broker-0"

		job := getJob(run, probe.JavaJobName(run))
		Expect(job.Labels[workers.LabelRole]).To(Equal(probe.RoleJava))
		Expect(job.Annotations).To(HaveKeyWithValue(probe.AnnotationBrokerPod, broker))
		pod := job.Spec.Template.Spec
		Expect(pod.Containers[0].Image).To(Equal("broker:1"), "the broker pod's image")
		Expect(pod.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0].Values).To(Equal([]string{"node-b"}))
		Expect(pod.Containers[0].Command[2]).To(ContainSubstring("-XshowSettings:properties -version 2>/dev/termination-log"))
		Expect(job.OwnerReferences).To(HaveLen(1))

		// No load before the brokers' Java is read.
		Consistently(func() v1alpha1.Phase { return getRun(run).Status.Phase }, "1s").Should(Equal(v1alpha1.PhaseProvisioning))

		Expect(terminatedPod(job, probe.RoleJava, `    java.vm.version = 21.0.5+11-LTS
Picked up JAVA_TOOL_OPTIONS: -XX:+UseContainerSupport
openjdk version "21.0.5" 2024-10-15 LTS
OpenJDK Runtime Environment Temurin-21.0.5+11 (build 21.0.5+11-LTS)
OpenJDK 64-Bit Server VM Temurin-21.0.5+11 (build 21.0.5+11-LTS, mixed mode, sharing)
`)).To(Succeed())
		finishJob(job, true)

		running := waitPhase(run, v1alpha1.PhaseRunning)
		want := &v1alpha1.JavaRuntime{Version: "21.0.5+11-LTS", Major: 21}
		tb := running.Status.Testbed
		Expect(tb.Topology.Java).To(Equal(want))
		Expect(tb.Topology.Image).To(Equal("broker:1"))
		Expect(tb.Note).NotTo(ContainSubstring("Java"))
		fromArgs := testbedOfCoordinator(run)
		Expect(fromArgs.Topology.Java).To(Equal(want))
		Expect(fromArgs.Topology.Image).To(Equal("broker:1"))

		// Removed once read, with the testbed's other Jobs.
		Eventually(gone(job)).Should(BeTrue())
	})

	It("is left unknown, saying why, when the probe fails; the run goes on", func() {
		ns := javaNamespace()
		run := managedPulsarWithBrokerPods(ns, nil)
		job := getJob(run, probe.JavaJobName(run))
		Expect(terminatedPod(job, probe.RoleJava, "/bin/sh: 1: exec: java: not found\n")).To(Succeed())
		finishJob(job, false)

		running := waitPhase(run, v1alpha1.PhaseRunning)
		tb := running.Status.Testbed
		Expect(tb.Topology.Java).To(BeNil())
		Expect(tb.Topology.Image).To(Equal("broker:1"))
		Expect(tb.Note).To(ContainSubstring("the brokers' Java version was not read from image broker:1: Job " + job.Name + " failed: BackoffLimitExceeded"))
		Expect(tb.Note).To(ContainSubstring("java: not found"))
	})

	It("is not probed for an existing cluster", func() {
		ns := javaNamespace()
		run := validRun(ns, v1alpha1.SystemKafka)
		run.Spec.Cluster = v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{BootstrapServers: "kafka.example:9092"}}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		running := waitPhase(run, v1alpha1.PhaseRunning)
		Expect(running.Status.Testbed.Topology).To(BeNil())
		Expect(jobNamesWithRole(ns, probe.RoleJava)()).To(BeEmpty())
	})
})

// lookalikeJava is what a tenant's look-alike probe pod claims: another
// Java than the brokers run.
const lookalikeJava = `openjdk version "11.0.22" 2024-01-16
OpenJDK Runtime Environment Temurin-11.0.22+7 (build 11.0.22+7)
OpenJDK 64-Bit Server VM Temurin-11.0.22+7 (build 11.0.22+7, mixed mode)
`

// lookalikePod is a pod someone who may create pods in the namespace made
// to look like one of the operator's: the labels and a name of the
// pattern, but no controller; terminated with message.
func lookalikePod(ns, name, node, image string, labels map[string]string, phase corev1.PodPhase, message string) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: corev1.PodSpec{NodeName: node, RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "kafka", Image: image}}},
	}
	ExpectWithOffset(1, k8sClient.Create(ctx, pod)).To(Succeed())
	pod.Status = corev1.PodStatus{Phase: phase}
	if message != "" {
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "kafka", Image: image, ImageID: image,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", Message: message}}}}
	}
	ExpectWithOffset(1, k8sClient.Status().Update(ctx, pod)).To(Succeed())
}

// Issue 58: what the operator reads back from a pod is taken only from
// pods the run's brokers or its own Jobs made, never from a look-alike
// with the same labels and a name of the same pattern.
var _ = Describe("the testbed of a run, among look-alike pods", func() {
	It("takes neither the image nor the node of a look-alike broker pod (the release's labels, not its StatefulSet's)", func() {
		ns := javaNamespace()
		var release string
		run := managedPulsarWithBrokerPods(ns, nil, func(run *v1alpha1.BenchmarkRun) {
			release = pulsar.ReleaseName(run)
			// Running and first by name: the pod the probe would take.
			lookalikePod(ns, release+"-broker-00", "node-z", "evil.example/exfiltrate:1",
				pulsar.ComponentPodLabels(release, "broker"), corev1.PodRunning, "")
		})
		job := getJob(run, probe.JavaJobName(run))
		Expect(job.Spec.Template.Spec.Containers[0].Image).To(Equal("broker:1"), "the image of the release's broker pod")
		Expect(job.Annotations).To(HaveKeyWithValue(probe.AnnotationBrokerPod, release+"-broker-0"))
		Expect(job.Annotations).To(HaveKeyWithValue(probe.AnnotationNode, "node-b"))

		Expect(terminatedPod(job, probe.RoleJava, playedJava)).To(Succeed())
		finishJob(job, true)
		running := waitPhase(run, v1alpha1.PhaseRunning)
		var probed []string
		for _, n := range running.Status.Testbed.Nodes {
			probed = append(probed, n.Node)
		}
		Expect(probed).To(ConsistOf("node-a", "node-b"), "the look-alike's node-z is no broker node")
		Expect(running.Status.Testbed.Topology.Image).To(Equal("broker:1"))
	})

	It("reads the Java from a pod of its own Job, never from a look-alike carrying the Job's label", func() {
		ns := javaNamespace()
		run := managedPulsarWithBrokerPods(ns, nil)
		job := getJob(run, probe.JavaJobName(run))
		lookalikePod(ns, job.Name+"-fake", "node-b", "broker:1",
			map[string]string{jobLabelName: job.Name, workers.LabelRun: run.Name, workers.LabelRole: probe.RoleJava}, corev1.PodSucceeded, lookalikeJava)
		finishJob(job, true)

		tb := waitPhase(run, v1alpha1.PhaseRunning).Status.Testbed
		Expect(tb.Topology.Java).To(BeNil(), "the look-alike's Java 11 is not the brokers'")
		Expect(tb.Note).To(ContainSubstring("the brokers' Java version was not read from image broker:1 (Job " + job.Name + ")"))
	})

	It("leaves the Java unknown, saying why, when a Job of its name was not created by the run, and leaves that Job alone", func() {
		ns := javaNamespace()
		var foreign *batchv1.Job
		run := managedPulsarWithBrokerPods(ns, nil, func(run *v1alpha1.BenchmarkRun) {
			foreign = &batchv1.Job{
				ObjectMeta: metav1.ObjectMeta{Name: probe.JavaJobName(run), Namespace: ns},
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "java", Image: "evil.example/exfiltrate:1"}}}}},
			}
			Expect(k8sClient.Create(ctx, foreign)).To(Succeed())
			lookalikePod(ns, foreign.Name+"-x", "node-b", "evil.example/exfiltrate:1",
				map[string]string{jobLabelName: foreign.Name}, corev1.PodSucceeded, lookalikeJava)
			finishJob(foreign, true)
		})

		tb := waitPhase(run, v1alpha1.PhaseRunning).Status.Testbed
		Expect(tb.Topology.Java).To(BeNil())
		Expect(tb.Topology.Image).To(BeEmpty(), "not the foreign Job's image")
		Expect(tb.Note).To(ContainSubstring("the brokers' Java version was not read: Job " + foreign.Name +
			" exists and was not created by this run (it has no controller); streambench neither uses nor deletes it"))
		Expect(gone(foreign)()).To(BeFalse(), "someone else's Job is left as it is")
	})

	It("takes a node's probe result from a pod of the probe Job, never from a look-alike carrying the Job's label", func() {
		ns := manualNamespace()
		run := managedPulsarWithBrokerPods(ns, nil)
		Eventually(jobNamesWithRole(ns, probe.RoleProbe)).Should(HaveLen(2))
		for _, node := range []string{"node-a", "node-b"} {
			job := getJob(run, probe.JobName(run, node))
			if node == "node-a" {
				// Only a look-alike says anything for node-a: a fast disk.
				fast, err := json.Marshal(nodeResult(node, 0.001, 9000))
				Expect(err).NotTo(HaveOccurred())
				lookalikePod(ns, job.Name+"-fake", node, testImage,
					map[string]string{jobLabelName: job.Name, workers.LabelRun: run.Name, workers.LabelRole: probe.RoleProbe}, corev1.PodSucceeded, string(fast))
			} else {
				Expect(probePod(job, node, nodeResult(node, 2.0, 800))).To(Succeed())
			}
			finishJob(job, true)
		}
		// The Java probe is played (playTestbed).
		tb := waitPhase(run, v1alpha1.PhaseRunning).Status.Testbed
		byNode := map[string]v1alpha1.NodeProbe{}
		for _, n := range tb.Nodes {
			byNode[n.Node] = n
		}
		Expect(byNode["node-a"].Volumes).To(BeEmpty(), "no figures from the look-alike")
		Expect(byNode["node-a"].Error).NotTo(BeEmpty(), "node-a's probe left no result of its own")
		Expect(byNode["node-b"].Volumes).NotTo(BeEmpty())
		Expect(*tb.SlowestFsyncP99Ms).To(BeNumerically("==", 2.0), "node-b's own result")
	})
})

// lookalikeStrimziBrokerSpecs run inside the Ordered container that
// installs Strimzi's CRDs (lifecycle_test.go).
func lookalikeStrimziBrokerSpecs() {
	It("fails when its Kafka is no longer its own, rather than sending its clients to that Kafka's bootstrap", func() {
		ns := newNamespace()
		run := validRun(ns, v1alpha1.SystemKafka)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		waitPhase(run, v1alpha1.PhaseProvisioning)
		kafka := kafkaObject(run)
		Eventually(func() error { return k8sClient.Get(ctx, client.ObjectKeyFromObject(kafka), kafka) }).Should(Succeed())
		kafka.SetOwnerReferences(nil)
		Expect(k8sClient.Update(ctx, kafka)).To(Succeed())
		strimziReady(run)

		// Two checks may see it first, and both refuse it: Provisioning's
		// (the Kafka's status is not the run's brokers'), or Pending's
		// Deploy run once more from a cached copy of the run that is not
		// yet in Provisioning (the Kafka exists and the run does not
		// control it). Which one wins is the informer's lag: on a busy
		// machine (cold run at 0ab0754) it was Deploy's.
		failed := waitPhase(run, v1alpha1.PhaseFailed)
		kafkaName := "Kafka " + ns + "/" + kafka.GetName()
		Expect(map[string]string{
			"reason": meta.FindStatusCondition(failed.Status.Conditions, v1alpha1.ConditionFailed).Reason, "message": failed.Status.Message,
		}).To(Or(
			Equal(map[string]string{"reason": "BrokersFailed", "message": kafkaName + " is no longer controlled by " + run.Name +
				" (it has no controller): it was replaced or taken over while the run waited for it, so its status is not that of the brokers the run deployed; streambench neither uses nor deletes it"}),
			Equal(map[string]string{"reason": "Failed", "message": kafkaName +
				" exists already and was not created by this run (it has no controller); streambench neither uses nor deletes it: rename the run, or delete that object if it is a leftover"}),
		))
		noJobs(run)
		Expect(gone(kafkaObject(run))()).To(BeFalse(), "teardown leaves a Kafka the run does not control")
	})

	It("takes the Java probe's image and node from a pod of the run's StrimziPodSet, not from a look-alike with Strimzi's labels", func() {
		ns := javaNamespace()
		run := validRun(ns, v1alpha1.SystemKafka)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		waitPhase(run, v1alpha1.PhaseProvisioning)

		// Strimzi's cluster operator: the node pool's StrimziPodSet, owned
		// by the pool, and its broker pod, controlled by it.
		pool := &unstructured.Unstructured{}
		pool.SetGroupVersionKind(strimzi.KafkaNodePoolGVK)
		Eventually(func() error {
			return k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: strimzi.PoolName(run)}, pool)
		}).Should(Succeed())
		podSet := &unstructured.Unstructured{}
		podSet.SetGroupVersionKind(strimzi.PodSetGVK)
		podSet.SetNamespace(ns)
		podSet.SetName(strimzi.PodSetName(run))
		podSet.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: strimzi.GroupVersion.String(), Kind: strimzi.KindKafkaNodePool,
			Name: pool.GetName(), UID: pool.GetUID(), BlockOwnerDeletion: ptr.To(true), Controller: ptr.To(false)}})
		podSet.Object["spec"] = map[string]any{"pods": []any{}}
		Expect(k8sClient.Create(ctx, podSet)).To(Succeed())
		labels := strimzi.BrokerPodLabels(strimzi.ClusterName(run))
		broker := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: strimzi.PodSetName(run) + "-0", Namespace: ns, Labels: labels,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(podSet, strimzi.PodSetGVK)}},
			Spec: corev1.PodSpec{NodeName: "node-k1", Containers: []corev1.Container{{Name: "kafka", Image: "kafka:1"}}},
		}
		Expect(k8sClient.Create(ctx, broker)).To(Succeed())
		// Running, which the probe prefers, and first by name.
		lookalikePod(ns, strimzi.PodSetName(run)+"-00", "node-kz", "evil.example/exfiltrate:1", labels, corev1.PodRunning, "")
		strimziReady(run)

		job := getJob(run, probe.JavaJobName(run))
		Expect(job.Spec.Template.Spec.Containers[0].Image).To(Equal("kafka:1"))
		Expect(job.Annotations).To(HaveKeyWithValue(probe.AnnotationBrokerPod, broker.Name))
		Expect(job.Annotations).To(HaveKeyWithValue(probe.AnnotationNode, "node-k1"))
		Expect(terminatedPod(job, probe.RoleJava, playedJava)).To(Succeed())
		finishJob(job, true)
		tb, err := json.Marshal(waitPhase(run, v1alpha1.PhaseRunning).Status.Testbed)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(tb)).NotTo(ContainSubstring("node-kz"), "the look-alike's node is no broker node")
	})
}
