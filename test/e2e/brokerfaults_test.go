//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/faultjob"
	"github.com/streambench/streambench-operator/internal/provision/privileged"
	"github.com/streambench/streambench-operator/internal/provision/probe"
	"github.com/streambench/streambench-operator/internal/provision/workers"
)

// faultMinutes is the measured phase of a three-node run with faults:
// long enough for a deleted broker or bookie to come back (about half a
// minute on the local cluster) and for the load to show it recovered.
const faultMinutes = 2

// withFaults gives a three-node level-1 run the faults of issue 40's
// managed experiment, after the spec's reads of the topic or the ledgers
// while the load runs (those come early in the measured phase), and a
// measured phase of faultMinutes.
func withFaults(run *v1alpha1.BenchmarkRun, fs ...v1alpha1.Fault) {
	run.Spec.Workload.TestDurationMinutes = ptr.To[float64](faultMinutes)
	run.Spec.Faults = fs
}

func e2eFault(action v1alpha1.FaultAction, target string, at, pause time.Duration) v1alpha1.Fault {
	f := v1alpha1.Fault{Action: action, Target: v1alpha1.FaultTarget(target), At: metav1.Duration{Duration: at}}
	if pause > 0 {
		f.Duration = &metav1.Duration{Duration: pause}
	}
	return f
}

// expectFaults checks a finished run's status.faults against its
// spec.faults: each injected at its time on the run's own pod, with its
// figures computed from the measured phase; a deleted pod's return is
// recorded when it came within the run. It returns the record, for the
// log.
func expectFaults(got *v1alpha1.BenchmarkRun) string {
	Expect(got.Status.Faults).To(HaveLen(len(got.Spec.Faults)), "one entry per fault")
	out := ""
	for _, st := range got.Status.Faults {
		f := got.Spec.Faults[st.Index]
		Expect(st.Injected).To(BeTrue(), "fault %d (%s %s): %s", st.Index, f.Action, f.Target, st.Message)
		Expect(st.Pod).To(HavePrefix(testNS+"/"), "the run's own pod")
		Expect(st.Node).NotTo(BeEmpty())
		Expect(st.InjectedAt).NotTo(BeNil())
		im := st.Impact
		Expect(im).NotTo(BeNil(), "fault %d has its figures", st.Index)
		Expect(im.TargetRateMsgPerSec).To(BeEquivalentTo(got.Spec.Workload.ProducerRate))
		Expect(im.IntervalSeconds).To(BeNumerically(">", 0))
		// The coordinator's clock and the operator's agree to within the
		// time a signal Job takes to start (a DeletePod is at once).
		Expect(im.InjectedSeconds).To(BeNumerically(">=", f.At.Seconds()-1), "fault %d injected before its time", st.Index)
		Expect(im.InjectedSeconds).To(BeNumerically("<", f.At.Seconds()+30), "fault %d injected long after its time", st.Index)
		back := "not back within the run"
		if st.ClearedAt != nil {
			back = fmt.Sprintf("cleared %.1f s after", st.ClearedAt.Sub(st.InjectedAt.Time).Seconds())
		}
		rec := "did not recover"
		if im.RecoverySeconds != nil {
			rec = fmt.Sprintf("recovered after %.1f s (%d relapses)", *im.RecoverySeconds, im.Relapses)
		}
		worst := "no p99"
		if im.WorstP99Ms != nil {
			worst = fmt.Sprintf("worst %s p99 %.0f ms", im.LatencySeries, *im.WorstP99Ms)
		}
		// Writes that stopped for a whole interval and came back held
		// sends for more than the stall floor (1 s, a 2 s interval): the
		// stall is explained, by a setting the coordinator read from the
		// brokers, the fault's own length, or the candidates it matched
		// none of.
		stall := "no stall"
		if im.LowestRateFraction == 0 && im.Recovered {
			Expect(im.Stall).NotTo(BeNil(), "fault %d: the writes stopped and came back, longest wait %v ms, but no stall", st.Index, im.LongestWaitMs)
			Expect(im.Stall.Explanation).To(HavePrefix("writes stopped "))
		}
		if im.Stall != nil {
			stall = im.Stall.Explanation
		}
		out += fmt.Sprintf("fault %d %s %s at %.1f s: %s; %s; lowest rate %.0f%% of %.0f msg/s; %s; %s; %d publish errors; %s\n",
			st.Index, f.Action, f.Target, im.InjectedSeconds, st.Resolved, back, 100*im.LowestRateFraction, im.TargetRateMsgPerSec, rec, worst, im.PublishErrors, stall)
	}
	return out
}

// expectNoPrivilegedJobs checks, once a run has finished, that its
// privileged Jobs (the signal Jobs of its faults, its page-cache drops)
// ran in the operator's namespace and are gone from it, and that the
// run's namespace never held one (issue 58: a tenant with pods/exec
// there could enter it).
func expectNoPrivilegedJobs(ctx context.Context, run *v1alpha1.BenchmarkRun) {
	Eventually(func(g Gomega) {
		var jobs batchv1.JobList
		g.Expect(k8s.List(ctx, &jobs, client.InNamespace(operatorNamespace), client.MatchingLabels{privileged.LabelRunUID: string(run.UID)})).To(Succeed())
		g.Expect(jobs.Items).To(BeEmpty(), "privileged Jobs of %s left in %s", run.Name, operatorNamespace)
	}).WithTimeout(time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	for _, role := range []string{faultjob.Role, probe.RoleDropCache} {
		var jobs batchv1.JobList
		Expect(k8s.List(ctx, &jobs, client.InNamespace(run.Namespace), client.MatchingLabels{workers.LabelRun: run.Name, workers.LabelRole: role})).To(Succeed())
		Expect(jobs.Items).To(BeEmpty(), "a privileged %s Job in the run's namespace %s", role, run.Namespace)
	}
}
