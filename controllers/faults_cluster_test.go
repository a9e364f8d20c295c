package controllers

import (
	"encoding/json"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/faults"
	"github.com/streambench/streambench-operator/internal/provision/faultjob"
	"github.com/streambench/streambench-operator/internal/provision/probe"
	"github.com/streambench/streambench-operator/internal/provision/workers"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
)

// faultyRun is an existing Kafka whose owner allowed faults on the pods
// labelled app=<cluster>.
func faultyRun(ns, cluster string, fs ...v1alpha1.Fault) *v1alpha1.BenchmarkRun {
	run := existingKafkaRun(ns)
	run.Spec.Workload.TestDurationMinutes = float(1)
	run.Spec.Cluster.Existing.Faults = &v1alpha1.ExistingClusterFaults{AllowDisruption: true,
		PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": cluster}}}
	run.Spec.Faults = fs
	return run
}

func fault(action v1alpha1.FaultAction, target string, at time.Duration) v1alpha1.Fault {
	return v1alpha1.Fault{Action: action, Target: v1alpha1.FaultTarget(target), At: metav1.Duration{Duration: at}}
}

// existingBrokerPod is a pod of the existing cluster, as the API server has it:
// without a node it is deleted at once (no kubelet to wait for), with
// one it keeps a container running under id (the status a kubelet would
// write: envtest has none).
func existingBrokerPod(ns, name, cluster, node, id string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": cluster}},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "kafka", Image: "kafka"}}},
	}
	Expect(k8sClient.Create(ctx, p)).To(Succeed())
	if id != "" {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "kafka", Image: "kafka", ContainerID: "containerd://" + id,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}
		Expect(k8sClient.Status().Update(ctx, p)).To(Succeed())
	}
	return p
}

// setReady plays the kubelet: the pod is ready since now.
func setReady(p *corev1.Pod) {
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	Expect(k8sClient.Status().Update(ctx, p)).To(Succeed())
}

// startMeasuring plays the coordinator through its own code: the
// measured phase's start, recorded in the results ConfigMap.
func startMeasuring(run *v1alpha1.BenchmarkRun, start time.Time) {
	w := &faults.ClockWriter{Client: k8sClient, Namespace: run.Namespace, Name: workers.ResultsName(run),
		Labels: map[string]string{results.LabelRun: run.Name}, Owner: coordinatorOwner(run)}
	Expect(w.Record(ctx, 0, start)).To(Succeed())
}

// coordinatorOwner is the owner reference the coordinator puts on the
// results ConfigMap it creates (--owner-uid): its run, as controller.
func coordinatorOwner(run *v1alpha1.BenchmarkRun) []metav1.OwnerReference {
	return []metav1.OwnerReference{results.OwnerRef{Name: run.Name, UID: string(run.UID)}.Reference()}
}

// writeFaultResults plays the coordinator's final write: a measured
// phase of 20 one-second intervals from start at 100 msg/s, but for the
// fourth, which publishes 10.
func writeFaultResults(run *v1alpha1.BenchmarkRun, start time.Time) {
	rec := stats.NewRecorder("worker-0", stats.PhaseMeasure, start)
	var snaps []stats.Snapshot
	for s := range 20 {
		n := 100
		if s == 3 {
			n = 10
		}
		for i := range n {
			sent := start.Add(time.Duration(s)*time.Second + time.Duration(i)*time.Second/time.Duration(n))
			rec.RecordSend(sent, sent, 1024)
			rec.RecordAck(sent, sent, sent.Add(3*time.Millisecond), 1024)
		}
		snaps = append(snaps, rec.Cut(start.Add(time.Duration(s+1)*time.Second)))
	}
	cm, _, err := results.BuildConfigMap(results.Input{
		Run: run.Name, Namespace: run.Namespace, Owner: &results.OwnerRef{Name: run.Name, UID: string(run.UID)},
		System: run.Spec.System, Workload: run.Spec.Workload, Snapshots: snaps,
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(results.Write(ctx, k8sClient, cm)).To(Succeed())
}

func faultStatus(run *v1alpha1.BenchmarkRun, index int) func() *v1alpha1.FaultStatus {
	return func() *v1alpha1.FaultStatus {
		return faultEntry(getRun(run), index, 0)
	}
}

var _ = Describe("faults in a cluster", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("deletes the target's pod at its time, records its return and its impact, and a target that is not there fails the fault, not the run", func() {
		run := faultyRun(ns, "kfk",
			fault(v1alpha1.FaultDeletePod, "broker-1", time.Second),
			fault(v1alpha1.FaultDeletePod, "broker-5", time.Second),    // no such pod
			fault(v1alpha1.FaultDeletePod, "broker-0", 50*time.Second)) // the phase ends first
		existingBrokerPod(ns, "kfk-broker-0", "kfk", "", "")
		target := existingBrokerPod(ns, "kfk-broker-1", "kfk", "", "")
		existingBrokerPod(ns, "other-broker-1", "other", "", "") // not selected
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		running := waitPhase(run, v1alpha1.PhaseRunning)
		// Nothing before the measured phase starts.
		Consistently(faultStatus(run, 0), 2*time.Second).Should(BeNil())

		start := time.Now().Add(-2 * time.Second)
		startMeasuring(running, start)
		Eventually(faultStatus(run, 0)).ShouldNot(BeNil())
		deleted := faultStatus(run, 0)()
		Expect(deleted.Injected).To(BeTrue(), "message: %s", deleted.Message)
		Expect(deleted.Pod).To(Equal(ns + "/kfk-broker-1"))
		Expect(deleted.InjectedAt.Time).To(BeTemporally(">=", start.Add(time.Second)))
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: target.Name}, &corev1.Pod{}))).To(BeTrue())
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "other-broker-1"}, &corev1.Pod{})).To(Succeed(), "a pod the selector does not take is left alone")

		Eventually(faultStatus(run, 1)).ShouldNot(BeNil())
		missing := faultStatus(run, 1)()
		Expect(missing.Injected).To(BeFalse())
		Expect(missing.Message).To(ContainSubstring("no pod is broker-5"))
		Expect(getRun(run).Status.Phase).To(Equal(v1alpha1.PhaseRunning), "a fault that cannot be done fails the fault, not the run")

		// Its replacement (the StatefulSet's, here the test's) comes up.
		Consistently(func() *metav1.MicroTime { return faultStatus(run, 0)().ClearedAt }, time.Second).Should(BeNil())
		setReady(existingBrokerPod(ns, "kfk-broker-1", "kfk", "", ""))
		Eventually(func() *metav1.MicroTime { return faultStatus(run, 0)().ClearedAt }).ShouldNot(BeNil())

		writeFaultResults(running, start)
		finishJob(getJob(run, workers.CoordinatorName(run)), true)
		done := waitPhase(run, v1alpha1.PhaseSucceeded)
		Expect(done.Status.Faults).To(HaveLen(3))
		im := faultEntry(done, 0, 0).Impact
		Expect(im).NotTo(BeNil())
		Expect(im.InjectedSeconds).To(BeNumerically("~", time.Since(start).Seconds(), 30))
		Expect(im.TargetRateMsgPerSec).To(BeEquivalentTo(1000))
		late := faultEntry(done, 2, 0)
		Expect(late.Injected).To(BeFalse())
		Expect(late.Message).To(ContainSubstring("its time had not come"))
		Expect(faultEntry(done, 1, 0).Impact).To(BeNil(), "a fault not injected has no figures")
	})

	It("kills the target through a privileged hostPID Job on its node and reads what it did (the Job's pod played by the test: envtest has no kubelet)", func() {
		run := faultyRun(ns, "kk", fault(v1alpha1.FaultKill, "broker-0", 0))
		const id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		existingBrokerPod(ns, "kk-broker-0", "kk", "node-a", id)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		running := waitPhase(run, v1alpha1.PhaseRunning)
		startMeasuring(running, time.Now())

		job := getJob(run, faultjob.Name(running, 0, 0))
		spec := job.Spec.Template.Spec
		Expect(spec.NodeName).To(Equal("node-a"))
		Expect(spec.HostPID).To(BeTrue())
		Expect(spec.Containers[0].Args).To(ContainElements("--container-ids="+id, "--signal=KILL"))
		Expect(faultStatus(run, 0)()).To(BeNil(), "no entry while the Job runs")

		injected := time.Now().UTC()
		res, err := json.Marshal(faults.SignalResult{Signal: "SIGKILL", Pids: []int{4242}, InjectedAt: injected})
		Expect(err).NotTo(HaveOccurred())
		jobPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: job.Name + "-x", Labels: map[string]string{"job-name": job.Name}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "signal", Image: "img"}}}}
		Expect(k8sClient.Create(ctx, jobPod)).To(Succeed())
		jobPod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "signal", Image: "img",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Message: string(res)}}}}
		Expect(k8sClient.Status().Update(ctx, jobPod)).To(Succeed())
		finishJob(job, true)

		Eventually(faultStatus(run, 0)).ShouldNot(BeNil())
		st := faultStatus(run, 0)()
		Expect(st.Injected).To(BeTrue(), "message: %s", st.Message)
		Expect(st.Node).To(Equal("node-a"))
		Expect(st.Resolved).To(ContainSubstring("SIGKILL to host pids 4242"))
		Expect(st.InjectedAt.Time).To(BeTemporally("~", injected, time.Millisecond))
		Eventually(func() error {
			var j batchv1.Job
			err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: job.Name}, &j)
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("job still there (err %v): deletion %v finalizers %v owners %v", err, j.DeletionTimestamp, j.Finalizers, j.OwnerReferences)
		}).Should(Succeed(), "the Job is deleted once read")
	})

	It("does not pause a pod from a namespace whose Pod Security forbids the privileged Job, and says why", func() {
		var nsObj corev1.Namespace
		Expect(k8sClient.Get(ctx, types.NamespacedName{Name: ns}, &nsObj)).To(Succeed())
		nsObj.Labels = map[string]string{probe.LabelPodSecurityEnforce: "baseline"}
		Expect(k8sClient.Update(ctx, &nsObj)).To(Succeed())
		p := fault(v1alpha1.FaultPause, "broker-0", 0)
		p.Duration = &metav1.Duration{Duration: 5 * time.Second}
		run := faultyRun(ns, "pp", p)
		existingBrokerPod(ns, "pp-broker-0", "pp", "node-a", "0123456789abcdef0123456789abcdef")
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		startMeasuring(waitPhase(run, v1alpha1.PhaseRunning), time.Now())
		Eventually(faultStatus(run, 0)).ShouldNot(BeNil())
		st := faultStatus(run, 0)()
		Expect(st.Injected).To(BeFalse())
		Expect(st.Message).To(ContainSubstring("privileged signal Job with hostPID on node node-a"))
		Expect(st.Message).To(ContainSubstring(probe.LabelPodSecurityEnforce))
		Expect(getRun(run).Status.Phase).To(Equal(v1alpha1.PhaseRunning))
		err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: faultjob.Name(run, 0, 0)}, &batchv1.Job{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no Job was made: %v", err)
	})

	It("hits the broker the coordinator names as leader at the fault's time, and a leader it cannot name fails the fault", func() {
		run := faultyRun(ns, "ld",
			fault(v1alpha1.FaultDeletePod, "leader", time.Second),
			fault(v1alpha1.FaultDeletePod, "leader", time.Second))
		existingBrokerPod(ns, "ld-broker-0", "ld", "", "")
		existingBrokerPod(ns, "ld-broker-2", "ld", "", "")
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		running := waitPhase(run, v1alpha1.PhaseRunning)
		w := &faults.ClockWriter{Client: k8sClient, Namespace: ns, Name: workers.ResultsName(run), Owner: coordinatorOwner(run)}
		Expect(w.Record(ctx, 0, time.Now().Add(-2*time.Second))).To(Succeed())
		// The operator waits for the coordinator's answer.
		Consistently(faultStatus(running, 0), 2*time.Second).Should(BeNil())
		Expect(w.RecordLeader(ctx, faults.LeaderAnswer{Index: 0, Target: faults.LeaderTarget(2), Detail: "leader of t-0 (replicas [2 0 1], in sync [2 0 1])"})).To(Succeed())
		Expect(w.RecordLeader(ctx, faults.LeaderAnswer{Index: 1, Error: "t-0 has no leader now"})).To(Succeed())
		Eventually(faultStatus(run, 0)).ShouldNot(BeNil())
		st := faultStatus(run, 0)()
		Expect(st.Injected).To(BeTrue(), st.Message)
		Expect(st.Pod).To(Equal(ns + "/ld-broker-2"))
		Expect(st.Resolved).To(HavePrefix("leader broker-2, leader of t-0"))
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "ld-broker-2"}, &corev1.Pod{}))).To(BeTrue())
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "ld-broker-0"}, &corev1.Pod{})).To(Succeed())
		Eventually(faultStatus(run, 1)).ShouldNot(BeNil())
		Expect(faultStatus(run, 1)().Message).To(ContainSubstring("no leader could be named at the fault's time: t-0 has no leader now"))
		Expect(getRun(run).Status.Phase).To(Equal(v1alpha1.PhaseRunning))
	})

	It("refuses leader on Pulsar before anything is deployed, naming the field and the fix", func() {
		run := validRun(ns, v1alpha1.SystemPulsar)
		run.Spec.Faults = []v1alpha1.Fault{fault(v1alpha1.FaultKill, "leader", time.Second)}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		failed := waitPhase(run, v1alpha1.PhaseFailed)
		Expect(failed.Status.Message).To(ContainSubstring("spec.faults[0].target"))
		Expect(failed.Status.Message).To(ContainSubstring("name the broker"))
	})
})
