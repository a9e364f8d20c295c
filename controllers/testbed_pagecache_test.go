package controllers

import (
	"context"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/pagecache"
	"github.com/streambench/streambench-operator/internal/provision/probe"
	"github.com/streambench/streambench-operator/internal/provision/workers"
	"github.com/streambench/streambench-operator/internal/results"
)

// runningManagedPulsar brings a managed Pulsar run with bookies on node-a
// and node-b to Running, playing its probe Jobs (and, when asked, the drop
// before the load) by hand: the namespace is manual, so playTestbed leaves
// every drop Job of these specs to the test. A run that drops is a
// backlog workload repeated twice: its coordinator asks for two mid-run
// drops (pagecache.MaxRequests).
func runningManagedPulsar(dropPageCache bool) *v1alpha1.BenchmarkRun {
	ns := manualNamespace()
	run := managedPulsarWithBrokerPods(ns, func(r *v1alpha1.BenchmarkRun) {
		r.Spec.Testbed = &v1alpha1.TestbedSpec{DropPageCache: dropPageCache}
		if dropPageCache {
			r.Spec.Workload.ConsumerBacklogSizeGB = float(1)
			r.Spec.Repeats = 2
		}
	})
	for _, node := range []string{"node-a", "node-b"} {
		job := getJob(run, probe.JobName(run, node))
		ExpectWithOffset(1, probePod(job, node, nodeResult(node, 1, 900))).To(Succeed())
		finishJob(job, true)
	}
	if dropPageCache {
		for _, node := range []string{"node-a", "node-b"} {
			finishJob(getPrivilegedJob(probe.DropCacheJobName(run, node)), true)
		}
	}
	return waitPhase(run, v1alpha1.PhaseRunning)
}

// coordinatorSide is the coordinator's own side of the handshake (the real
// pagecache.Requester, as `streambench coordinator --drop-page-cache` uses
// it), against the envtest API server. Its answer arrives on the channel.
type dropAnswer struct {
	drop v1alpha1.PageCacheDrop
	err  error
}

func askForDrop(run *v1alpha1.BenchmarkRun, timeout time.Duration) <-chan dropAnswer {
	r := &pagecache.Requester{
		Client: k8sClient, Namespace: run.Namespace, Name: workers.ResultsName(run),
		Labels:  map[string]string{results.LabelRun: run.Name},
		Owner:   coordinatorOwner(run),
		Timeout: timeout, Poll: 100 * time.Millisecond,
	}
	out := make(chan dropAnswer, 1)
	var once sync.Once
	go func() {
		defer GinkgoRecover()
		d, err := r.DropPageCache(context.Background(), pagecache.ReasonBeforeDrain)
		once.Do(func() { out <- dropAnswer{d, err} })
	}()
	return out
}

func resultsConfigMap(run *v1alpha1.BenchmarkRun) *corev1.ConfigMap {
	var cm corev1.ConfigMap
	ExpectWithOffset(1, k8sClient.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: workers.ResultsName(run)}, &cm)).To(Succeed())
	return &cm
}

// envtest has an API server but no Job controller and no kubelet: no drop
// Job ever runs here. The specs play the Job controller by hand
// (finishJob), which is what the operator reads.
var _ = Describe("the page-cache drop before the catch-up reads", func() {
	It("answers the coordinator's mid-run request with drop Jobs on every broker node in the operator's namespace, also across an operator restart, and records each drop", func() {
		run := runningManagedPulsar(true)
		Expect(getRun(run).Status.Testbed.PageCacheDrops).To(HaveLen(1), "the drop before the load is recorded as request 0")
		Expect(getRun(run).Status.Testbed.PageCacheDrops[0].Reason).To(Equal(pagecache.ReasonBeforeLoad))

		answer := askForDrop(run, time.Minute)
		Eventually(privilegedJobNames(run, probe.RoleDropCache)).Should(ConsistOf(
			probe.DropCacheJobNameFor(run, "node-a", 1)+"@node-a", probe.DropCacheJobNameFor(run, "node-b", 1)+"@node-b"))
		noPrivilegedJobIn(run.Namespace)
		job := getPrivilegedJob(probe.DropCacheJobNameFor(run, "node-b", 1))
		Expect(*job.Spec.Template.Spec.Containers[0].SecurityContext.Privileged).To(BeTrue())
		Expect(job.Spec.Template.Spec.Containers[0].Args).To(Equal([]string{"drop-page-cache"}))
		// Not answered while the Jobs run.
		Consistently(answer, "1s").ShouldNot(Receive())

		// A restarted operator finds the request and its Jobs again.
		restartManager()
		finishJob(getPrivilegedJob(probe.DropCacheJobNameFor(run, "node-a", 1)), true)
		finishJob(getPrivilegedJob(probe.DropCacheJobNameFor(run, "node-b", 1)), true)
		var got dropAnswer
		Eventually(answer, "20s").Should(Receive(&got))
		Expect(got.err).NotTo(HaveOccurred())
		Expect(got.drop.Dropped).To(BeTrue())
		Expect(got.drop.Nodes).To(Equal([]string{"node-a", "node-b"}))

		ack, ok, err := pagecache.AnswerTo(resultsConfigMap(run).Data, 1)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(ack.State).To(Equal(pagecache.StateDone))
		drops := getRun(run).Status.Testbed.PageCacheDrops
		Expect(drops).To(HaveLen(2))
		Expect(drops[1].Seq).To(Equal(int32(1)))
		Expect(drops[1].Reason).To(Equal(pagecache.ReasonBeforeDrain))
		Expect(drops[1].Dropped).To(BeTrue())
		Eventually(privilegedJobNames(run, probe.RoleDropCache)).Should(BeEmpty())
		Expect(getRun(run).Status.Phase).To(Equal(v1alpha1.PhaseRunning))

		// A second request gets Jobs of its own; one fails, and the
		// coordinator hears on which node.
		answer = askForDrop(run, time.Minute)
		finishJob(getPrivilegedJob(probe.DropCacheJobNameFor(run, "node-a", 2)), true)
		finishJob(getPrivilegedJob(probe.DropCacheJobNameFor(run, "node-b", 2)), false)
		Eventually(answer, "20s").Should(Receive(&got))
		Expect(got.err).To(MatchError(ContainSubstring("node node-b: Job " + operatorNamespace + "/" + probe.DropCacheJobNameFor(run, "node-b", 2) + " failed")))
		Expect(got.drop.Dropped).To(BeFalse())
		Eventually(func() []v1alpha1.PageCacheDrop { return getRun(run).Status.Testbed.PageCacheDrops }).Should(HaveLen(3))
		Expect(getRun(run).Status.Testbed.PageCacheDrops[2].Message).To(ContainSubstring("node node-b"))
	})

	It("runs no drop Job for a run that did not ask for drops, and says so to the coordinator at once", func() {
		run := runningManagedPulsar(false)
		answer := askForDrop(run, time.Minute)
		var got dropAnswer
		Eventually(answer, "20s").Should(Receive(&got))
		Expect(got.err).To(MatchError(ContainSubstring("spec.testbed.dropPageCache is false")))
		Expect(privilegedJobNames(run, probe.RoleDropCache)()).To(BeEmpty())
		// Beyond what the run asks for, so not recorded: a request written
		// into the ConfigMap cannot grow the run's status.
		Expect(getRun(run).Status.Testbed.PageCacheDrops).To(BeEmpty())
	})

	It("runs drop Jobs only for the requests the run's coordinator can make, only on its broker nodes, and never twice for one request (requests written into the results ConfigMap by hand, as a tenant can)", func() {
		run := runningManagedPulsar(true)
		write := func(key string, v any) {
			Eventually(func() error {
				cm := resultsConfigMap(run)
				var err error
				if cm.Data, err = pagecache.Put(cm.Data, key, v); err != nil {
					return err
				}
				return k8sClient.Update(ctx, cm)
			}).Should(Succeed())
		}
		answered := func(seq int32) func() *pagecache.Ack {
			return func() *pagecache.Ack {
				ack, ok, _ := pagecache.ReadAck(resultsConfigMap(run).Data)
				if !ok || ack.Seq != seq {
					return nil
				}
				return &ack
			}
		}
		// The coordinator's ConfigMap, before it wrote anything.
		Expect(k8sClient.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: workers.ResultsName(run),
			Labels: map[string]string{results.LabelRun: run.Name}, OwnerReferences: coordinatorOwner(run)}})).To(Succeed())

		// A request that names nodes of its own: the Jobs go to the run's
		// broker nodes all the same, never node-c (its ZooKeeper's) or
		// one of the cluster's others.
		write(pagecache.KeyRequest, map[string]any{"seq": 1, "reason": "by hand", "nodes": []string{"node-c", "control-plane"}})
		Eventually(privilegedJobNames(run, probe.RoleDropCache)).Should(ConsistOf(
			probe.DropCacheJobNameFor(run, "node-a", 1)+"@node-a", probe.DropCacheJobNameFor(run, "node-b", 1)+"@node-b"))
		for _, node := range []string{"node-a", "node-b"} {
			job := getPrivilegedJob(probe.DropCacheJobNameFor(run, node, 1))
			terms := job.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
			Expect(terms).To(HaveLen(1))
			Expect(terms[0].MatchFields[0].Values).To(Equal([]string{node}))
			finishJob(job, true)
		}
		Eventually(answered(1), "20s").ShouldNot(BeNil())
		Expect(answered(1)().State).To(Equal(pagecache.StateDone))
		Expect(answered(1)().Nodes).To(Equal([]string{"node-a", "node-b"}))
		Eventually(privilegedJobNames(run, probe.RoleDropCache)).Should(BeEmpty())
		Expect(getRun(run).Status.Testbed.PageCacheDrops).To(HaveLen(2))

		// The answer overwritten: request 1 is pending again. It is
		// answered from the record, with no Job.
		write(pagecache.KeyAck, pagecache.Ack{Seq: 0})
		Eventually(answered(1), "20s").ShouldNot(BeNil())
		Expect(answered(1)().State).To(Equal(pagecache.StateDone))
		Consistently(privilegedJobNames(run, probe.RoleDropCache), "1s").Should(BeEmpty())
		Expect(getRun(run).Status.Testbed.PageCacheDrops).To(HaveLen(2))

		// Beyond the two drops a backlog run repeated twice asks for.
		write(pagecache.KeyRequest, pagecache.Request{Seq: 3, Reason: "by hand"})
		Eventually(answered(3), "20s").ShouldNot(BeNil())
		ack := answered(3)()
		Expect(ack.State).To(Equal(pagecache.StateFailed))
		Expect(ack.Message).To(ContainSubstring("page-cache drop request 3 in results ConfigMap key " + pagecache.KeyRequest + " refused, and no privileged Job run for it"))
		Expect(ack.Message).To(ContainSubstring("at most (one per repeat of a backlog workload: spec.repeats 2"))
		Consistently(privilegedJobNames(run, probe.RoleDropCache), "1s").Should(BeEmpty())
		Expect(getRun(run).Status.Testbed.PageCacheDrops).To(HaveLen(2), "not recorded")
		Expect(getRun(run).Status.Phase).To(Equal(v1alpha1.PhaseRunning))
	})
})
