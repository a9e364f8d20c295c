package controllers

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/faults"
	"github.com/streambench/streambench-operator/internal/provision/faultjob"
	"github.com/streambench/streambench-operator/internal/provision/privileged"
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

// containerID is a broker container's id, as containerd makes them.
const containerID = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// privilegedJobPod plays the Job controller and the kubelet for a
// privileged Job: a pod in the operator's namespace that the Job
// controls, whose container ended with message.
func privilegedJobPod(job *batchv1.Job, message string) error {
	labels := map[string]string{jobLabelName: job.Name, "job-name": job.Name}
	for k, v := range job.Spec.Template.Labels {
		labels[k] = v
	}
	c := job.Spec.Template.Spec.Containers[0]
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: job.Name + "-x", Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: c.Name, Image: c.Image}}},
	}
	if err := k8sClient.Create(ctx, p); err != nil {
		return err
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: c.Name, Image: c.Image,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Message: message}}}}
	return k8sClient.Status().Update(ctx, p)
}

// pausing brings an existing-cluster run to Running with a Pause of
// broker-0 under way: its signal Job made, and never finished (envtest
// has no Job controller).
func pausing(ns string, mutate func(*v1alpha1.BenchmarkRun)) *v1alpha1.BenchmarkRun {
	p := fault(v1alpha1.FaultPause, "broker-0", 0)
	p.Duration = &metav1.Duration{Duration: time.Minute}
	run := faultyRun(ns, "pz", p)
	mutate(run)
	existingBrokerPod(ns, "pz-broker-0", "pz", "node-a", containerID)
	ExpectWithOffset(1, k8sClient.Create(ctx, run)).To(Succeed())
	running := waitPhase(run, v1alpha1.PhaseRunning)
	startMeasuring(running, time.Now())
	getPrivilegedJob(faultjob.Name(running, 0, 0))
	return running
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
		// The results ConfigMap's summary.json holds them as status does
		// (a local run's summary.json has its faults too).
		var cm corev1.ConfigMap
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: workers.ResultsName(done)}, &cm)).To(Succeed())
		kept, err := results.Read(&cm)
		Expect(err).NotTo(HaveOccurred())
		Expect(kept.Faults).To(Equal(done.Status.Faults))
		late := faultEntry(done, 2, 0)
		Expect(late.Injected).To(BeFalse())
		Expect(late.Message).To(ContainSubstring("its time had not come"))
		Expect(faultEntry(done, 1, 0).Impact).To(BeNil(), "a fault not injected has no figures")
	})

	It("kills the target through a privileged hostPID Job on its node in the operator's namespace, reads what it did only from the pod that Job made, and deletes it (the Job's pod played by the test: envtest has no kubelet)", func() {
		run := faultyRun(ns, "kk", fault(v1alpha1.FaultKill, "broker-0", 0))
		existingBrokerPod(ns, "kk-broker-0", "kk", "node-a", containerID)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		running := waitPhase(run, v1alpha1.PhaseRunning)
		startMeasuring(running, time.Now())

		job := getPrivilegedJob(faultjob.Name(running, 0, 0))
		spec := job.Spec.Template.Spec
		Expect(spec.NodeName).To(Equal("node-a"))
		Expect(spec.HostPID).To(BeTrue())
		Expect(spec.Containers[0].Args).To(ContainElements("--container-ids="+containerID, "--signal=KILL"))
		Expect(job.OwnerReferences).To(BeEmpty(), "no owner reference crosses namespaces")
		Expect(job.Labels).To(HaveKeyWithValue(privileged.LabelRunUID, string(running.UID)))
		Expect(job.Labels).To(HaveKeyWithValue(privileged.LabelRunNamespace, ns))
		Expect(job.Annotations).To(HaveKeyWithValue(faultjob.AnnotationTarget, ns+"/kk-broker-0"))
		noPrivilegedJobIn(ns)
		Expect(faultStatus(run, 0)()).To(BeNil(), "no entry while the Job runs")

		injected := time.Now().UTC()
		res, err := json.Marshal(faults.SignalResult{Signal: "SIGKILL", Pids: []int{4242}, InjectedAt: injected})
		Expect(err).NotTo(HaveOccurred())
		Expect(privilegedJobPod(job, string(res))).To(Succeed())
		finishJob(job, true)

		Eventually(faultStatus(run, 0)).ShouldNot(BeNil())
		st := faultStatus(run, 0)()
		Expect(st.Injected).To(BeTrue(), "message: %s", st.Message)
		Expect(st.Node).To(Equal("node-a"))
		Expect(st.Resolved).To(ContainSubstring("SIGKILL to host pids 4242"))
		Expect(st.InjectedAt.Time).To(BeTemporally("~", injected, time.Millisecond))
		Eventually(func() error {
			var j batchv1.Job
			err := k8sClient.Get(ctx, types.NamespacedName{Namespace: operatorNamespace, Name: job.Name}, &j)
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("job still there (err %v): deletion %v finalizers %v", err, j.DeletionTimestamp, j.Finalizers)
		}).Should(Succeed(), "the Job is deleted once read")
	})

	It("takes a signal Job's outcome only from the pod that Job made, never from one that merely carries its name or its run's labels", func() {
		run := faultyRun(ns, "fk", fault(v1alpha1.FaultKill, "broker-0", 0))
		existingBrokerPod(ns, "fk-broker-0", "fk", "node-a", containerID)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		running := waitPhase(run, v1alpha1.PhaseRunning)
		startMeasuring(running, time.Now())
		job := getPrivilegedJob(faultjob.Name(running, 0, 0))

		// What others can write claims a kill that never happened: a pod
		// in the run's namespace with the Job's name, one in the
		// operator's with the Job's labels that no Job controls, and one
		// that another Job of that name (a UID since gone) controlled.
		forged := func(ns, name string, labels map[string]string, owner types.UID, pid int) {
			res, err := json.Marshal(faults.SignalResult{Signal: "SIGKILL", Pids: []int{pid}, InjectedAt: time.Now().UTC()})
			Expect(err).NotTo(HaveOccurred())
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "signal", Image: "img"}}}}
			if owner != "" {
				p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: owner, Controller: ptr.To(true)}}
			}
			Expect(k8sClient.Create(ctx, p)).To(Succeed())
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "signal", Image: "img",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Message: string(res)}}}}
			Expect(k8sClient.Status().Update(ctx, p)).To(Succeed())
		}
		named := map[string]string{"job-name": job.Name, jobLabelName: job.Name}
		forged(ns, job.Name+"-t", named, "", 666)
		labelled := map[string]string{}
		for k, v := range job.Spec.Template.Labels {
			labelled[k] = v
		}
		for k, v := range named {
			labelled[k] = v
		}
		forged(operatorNamespace, job.Name+"-o", labelled, "", 667)
		forged(operatorNamespace, job.Name+"-p", labelled, "0f000000-0000-4000-8000-000000000000", 668)
		finishJob(job, true)

		Eventually(faultStatus(run, 0)).ShouldNot(BeNil())
		st := faultStatus(run, 0)()
		Expect(st.Injected).To(BeFalse(), "resolved: %s", st.Resolved)
		Expect(st.Message).To(ContainSubstring("signal Job " + job.Name + " finished, but what it did is unreadable"))
		// The Job's name ends in a hash that may itself hold "66" (CI
		// once drew run-2hxrb-fault0-06349166): look past it.
		rest := strings.ReplaceAll(st.Message, job.Name, "<job>")
		for _, pid := range []string{"666", "667", "668"} {
			Expect(rest).NotTo(ContainSubstring(pid), "a forged pod's pid reached the fault's message")
		}
		Expect(st.Resolved).NotTo(ContainSubstring("host pids"))
	})

	It("decides a signal Job by the Pod Security of the operator's namespace, never the run's: refused there with the cluster admin's fix, made there once it allows it", func() {
		// A tenant's namespace that admits no privileged pod does not
		// matter: the Job does not run there.
		labelNamespace(ns, map[string]string{privileged.LabelPodSecurityEnforce: "baseline"})
		labelOperatorNamespace(map[string]string{privileged.LabelPodSecurityEnforce: "baseline"})
		first, second := fault(v1alpha1.FaultPause, "broker-0", 0), fault(v1alpha1.FaultPause, "broker-0", 8*time.Second)
		first.Duration, second.Duration = &metav1.Duration{Duration: 5 * time.Second}, &metav1.Duration{Duration: 5 * time.Second}
		run := faultyRun(ns, "pp", first, second)
		existingBrokerPod(ns, "pp-broker-0", "pp", "node-a", containerID)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		running := waitPhase(run, v1alpha1.PhaseRunning)
		startMeasuring(running, time.Now())
		Eventually(faultStatus(run, 0)).ShouldNot(BeNil())
		st := faultStatus(run, 0)()
		Expect(st.Injected).To(BeFalse())
		Expect(st.Message).To(ContainSubstring("privileged signal Job with hostPID on node node-a"))
		Expect(st.Message).To(ContainSubstring("the operator's namespace " + operatorNamespace))
		Expect(st.Message).To(ContainSubstring("a cluster admin allows them with `kubectl label namespace " + operatorNamespace + " pod-security.kubernetes.io/enforce=privileged --overwrite`"))
		Expect(st.Message).NotTo(ContainSubstring("namespace "+ns), "the tenant is never told to let their namespace run privileged pods")
		Expect(getRun(run).Status.Phase).To(Equal(v1alpha1.PhaseRunning), "a fault that cannot be done fails the fault, not the run")
		Expect(privilegedJobNames(running, faultjob.Role)()).To(BeEmpty(), "no Job was made")
		noPrivilegedJobIn(ns)

		// The cluster's admin allows it; the tenant's namespace stays as it was.
		labelNamespace(operatorNamespace, map[string]string{privileged.LabelPodSecurityEnforce: "privileged"})
		job := getPrivilegedJob(faultjob.Name(running, 1, 0))
		Expect(job.Spec.Template.Spec.Containers[0].Args).To(ContainElements("--container-ids="+containerID, "--signal=STOP", "--pause=5s"))
		Expect(faultStatus(run, 1)()).To(BeNil(), "the Job runs")
		noPrivilegedJobIn(ns)
	})

	It("removes a Pause's Job from the operator's namespace when its run is deleted mid-pause, whatever its teardown policy", func() {
		running := pausing(ns, func(run *v1alpha1.BenchmarkRun) { run.Spec.Teardown.Policy = v1alpha1.TeardownNever })
		job := getPrivilegedJob(faultjob.Name(running, 0, 0))
		Expect(k8sClient.Delete(ctx, getRun(running))).To(Succeed())
		Eventually(gone(&v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: running.Name, Namespace: ns}})).Should(BeTrue())
		Expect(gone(job)()).To(BeTrue(), "the run went, and its privileged Job is still in %s", operatorNamespace)
		Expect(privilegedJobNames(running, faultjob.Role)()).To(BeEmpty())
	})

	It("removes a Pause's Job from the operator's namespace when its run ends, even one whose teardown policy keeps its workers", func() {
		running := pausing(ns, func(run *v1alpha1.BenchmarkRun) { run.Spec.Teardown.Policy = v1alpha1.TeardownNever })
		job := getPrivilegedJob(faultjob.Name(running, 0, 0))
		finishJob(getJob(running, workers.CoordinatorName(running)), false)
		waitPhase(running, v1alpha1.PhaseFailed)
		Eventually(gone(job)).Should(BeTrue(), "a finished run's privileged Job stays in %s", operatorNamespace)
		workerJob := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: workers.WorkerJobName(running), Namespace: ns}}
		Expect(gone(workerJob)()).To(BeFalse(), "the policy still keeps the run's own")
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

	It("takes leader on Pulsar (the coordinator names the first topic's owner at the fault's time), as on Kafka", func() {
		run := validRun(ns, v1alpha1.SystemPulsar)
		run.Spec.Faults = []v1alpha1.Fault{fault(v1alpha1.FaultKill, "leader", time.Second)}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		Eventually(func() v1alpha1.Phase { return getRun(run).Status.Phase }).ShouldNot(BeEmpty())
		Consistently(func() string { r := getRun(run); return string(r.Status.Phase) + ": " + r.Status.Message }, 3*time.Second).
			ShouldNot(HavePrefix(string(v1alpha1.PhaseFailed)))
	})
})
