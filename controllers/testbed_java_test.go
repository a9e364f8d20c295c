package controllers

import (
	"encoding/json"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/probe"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
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
