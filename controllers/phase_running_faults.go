package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/faults"
	"github.com/streambench/streambench-operator/internal/provision/brokerpods"
	"github.com/streambench/streambench-operator/internal/provision/faultjob"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
	"github.com/streambench/streambench-operator/internal/provision/workers"
	"github.com/streambench/streambench-operator/internal/tenancy"
)

// spec.faults in a cluster, in the Running phase. The clock is the
// coordinator's: it writes each repeat's measured-phase start into the
// results ConfigMap (internal/faults, clock.go), and a fault is due at
// that start plus its `at`. A due fault is resolved to one of the run's
// pods (faults.PodFor) and carried out: a DeletePod through the API, a
// Kill or a Pause by a signal Job on the pod's node
// (internal/provision/faultjob), which runs in the operator's namespace,
// never the run's (privileged_jobs.go). Every outcome is an entry of
// status.faults, injected or not and why: a fault that cannot be done
// fails the fault, never the run. The state is status.faults and the
// Jobs, named after the fault and the run's UID, so a restarted operator
// carries on.

// leaderWait is how long after a leader fault's time the operator waits
// for the coordinator to name the leader: its look-up's bound and a
// write.
const leaderWait = 30 * time.Second

// faultPoll is how often a signal Job's end and a target's return are
// looked for.
const faultPoll = 2 * time.Second

// reconcileFaults injects the faults that are due and records what
// happened. wait > 0 is when to look again (the next fault, a signal Job
// running, a target not back yet).
func (r *BenchmarkRunReconciler) reconcileFaults(ctx context.Context, run *v1alpha1.BenchmarkRun) (wait time.Duration, err error) {
	if len(run.Spec.Faults) == 0 {
		return 0, nil
	}
	cm, foreign, err := runResults(ctx, r.Client, run)
	if err != nil || foreign != "" {
		if foreign != "" {
			log.FromContext(ctx).Info("fault clock not read", "reason", foreign)
		}
		return 0, client.IgnoreNotFound(err)
	}
	starts, err := faults.ReadMeasureStarts(cm.Data)
	if err != nil {
		// Not this version's coordinator: the faults are closed as not
		// injected when the run ends (faultMissed).
		log.FromContext(ctx).Info("fault clock unreadable", "error", err.Error())
		return 0, nil
	}
	soon := func(d time.Duration) {
		if d > 0 && (wait == 0 || d < wait) {
			wait = d
		}
	}
	back, err := r.watchFaultTargets(ctx, run)
	if err != nil {
		return 0, err
	}
	if !back {
		soon(faultPoll)
	}
	if len(starts) == 0 {
		return wait, nil
	}
	repeat := len(starts) - 1
	elapsed := time.Since(starts[repeat])
	fresh := false
	for i, f := range run.Spec.Faults {
		if faultEntry(run, i, repeat) != nil {
			continue
		}
		if d := f.At.Duration - elapsed; d > 0 {
			soon(d)
			continue
		}
		if !fresh {
			// The cache may not hold the entry a reconcile just wrote
			// (its own write wakes the next one): a fault done twice
			// would delete the replacement pod, or signal twice. The
			// API server's copy decides.
			if err := r.apiReader().Get(ctx, client.ObjectKeyFromObject(run), run); err != nil {
				return 0, err
			}
			fresh = true
			if faultEntry(run, i, repeat) != nil {
				continue
			}
		}
		leaders, err := faults.ReadLeaders(cm.Data)
		if err != nil {
			log.FromContext(ctx).Info("fault leaders unreadable", "error", err.Error())
		}
		st, pending, err := r.injectFault(ctx, run, i, repeat, f, leaders, elapsed-f.At.Duration)
		if err != nil {
			return 0, err
		}
		if pending {
			soon(time.Second)
			continue
		}
		if err := r.recordFault(ctx, run, st); err != nil {
			return 0, err
		}
		if st.Injected && st.ClearedAt == nil && st.Action != v1alpha1.FaultPause {
			soon(faultPoll)
		}
	}
	return wait, nil
}

// faultEntry is status.faults' entry of fault index in the run's repeat
// (from 0, as the measured phases' starts count them), nil before it has
// one.
func faultEntry(run *v1alpha1.BenchmarkRun, index, repeat int) *v1alpha1.FaultStatus {
	return statusFault(run, int32(index), faultRepeat(run, repeat))
}

// faultRepeat is status.faults' number of the run's repeat (from 0).
func faultRepeat(run *v1alpha1.BenchmarkRun, repeat int) int32 {
	return v1alpha1.FaultRepeat(run.Spec.RepeatCount() > 1, repeat)
}

// statusFault is the entry of fault index whose status.faults repeat is
// repeat.
func statusFault(run *v1alpha1.BenchmarkRun, index, repeat int32) *v1alpha1.FaultStatus {
	for i := range run.Status.Faults {
		if f := &run.Status.Faults[i]; f.Index == index && f.Repeat == repeat {
			return f
		}
	}
	return nil
}

// writeFault writes st into status.faults, one entry per fault and
// repeat.
func (r *BenchmarkRunReconciler) writeFault(ctx context.Context, run *v1alpha1.BenchmarkRun, st v1alpha1.FaultStatus) error {
	_, err := r.patchStatus(ctx, run, func(run *v1alpha1.BenchmarkRun) bool {
		if e := statusFault(run, st.Index, st.Repeat); e != nil {
			*e = st
			return true
		}
		run.Status.Faults = append(run.Status.Faults, st)
		return true
	})
	return err
}

// recordFault writes a fault's outcome and says what happened as an
// event.
func (r *BenchmarkRunReconciler) recordFault(ctx context.Context, run *v1alpha1.BenchmarkRun, st v1alpha1.FaultStatus) error {
	if err := r.writeFault(ctx, run, st); err != nil {
		return err
	}
	what := fmt.Sprintf("fault %d (%s %s, repeat %d)", st.Index, st.Action, st.Target, st.Repeat)
	eventType, reason, note := corev1.EventTypeNormal, "FaultInjected", fmt.Sprintf("%s injected: %s", what, st.Resolved)
	if !st.Injected {
		eventType, reason, note = corev1.EventTypeWarning, "FaultNotInjected", fmt.Sprintf("%s not injected: %s", what, st.Message)
	}
	log.FromContext(ctx).Info(note)
	if r.Recorder != nil {
		r.Recorder.Eventf(run, nil, eventType, reason, string(run.Status.Phase), "%s", note)
	}
	return nil
}

// injectFault carries out fault index of repeat, or goes on with its
// signal Job. pending: the Job has not ended yet. An error is the API
// server's (retried); what makes the fault impossible is in st.
func (r *BenchmarkRunReconciler) injectFault(ctx context.Context, run *v1alpha1.BenchmarkRun, index, repeat int, f v1alpha1.Fault, leaders faults.Leaders, late time.Duration) (st v1alpha1.FaultStatus, pending bool, err error) {
	st = v1alpha1.FaultStatus{Index: int32(index), Repeat: faultRepeat(run, repeat), Action: f.Action, Target: f.Target}
	notInjected := func(format string, a ...any) (v1alpha1.FaultStatus, bool, error) {
		st.Message = fmt.Sprintf(format, a...)
		return st, false, nil
	}
	if f.Action != v1alpha1.FaultDeletePod {
		// A Job from an earlier reconcile (or an operator before a restart).
		job, err := r.privilegedJob(ctx, run, faultjob.Name(run, index, repeat))
		if err == nil {
			return r.signalOutcome(ctx, run, job, st)
		}
		if !apierrors.IsNotFound(err) {
			return st, false, err
		}
	}
	target, leader := f.Target, ""
	if f.Target == v1alpha1.FaultTarget(v1alpha1.RoleLeader) {
		// The coordinator names the leader at the fault's time
		// (internal/faults, leaders.go).
		a, ok := leaders.For(index, repeat)
		switch {
		case !ok && late < leaderWait:
			return st, true, nil
		case !ok:
			return notInjected("the coordinator named no leader within %s of the fault's time (its log says why: kubectl logs job/%s)", leaderWait, workers.CoordinatorName(run))
		case a.Error != "":
			return notInjected("no leader could be named at the fault's time: %s", a.Error)
		}
		target, leader = a.Target, fmt.Sprintf("leader %s, %s: ", a.Target, a.Detail)
	}
	pods, ns, err := r.faultPods(ctx, run)
	if err != nil {
		if errors.Is(err, errNoConsent) {
			return notInjected("namespace %s no longer agrees that runs of namespace %s disrupt its pods (its annotation %s was removed or no longer lists %s)", ns, run.Namespace, tenancy.AllowFaultsFrom, run.Namespace)
		}
		if apierrors.IsForbidden(err) {
			return notInjected("the operator may not list pods in namespace %s to find %s: %v", ns, f.Target, err)
		}
		return st, false, err
	}
	pod, err := faults.PodFor(target, pods)
	if err != nil {
		return notInjected("%v", err)
	}
	st.Pod, st.Node = pod.Namespace+"/"+pod.Name, pod.Spec.NodeName

	if f.Action == v1alpha1.FaultDeletePod {
		err := r.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})
		switch {
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
			return notInjected("pod %s went before it could be deleted", st.Pod)
		case apierrors.IsForbidden(err):
			return notInjected("the operator may not delete pod %s (%v); grant its ServiceAccount delete on pods, as the chart's ClusterRole does", st.Pod, err)
		case err != nil:
			return st, false, err
		}
		st.Injected, st.InjectedAt = true, ptr.To(metav1.NowMicro())
		st.Resolved = fmt.Sprintf("%spod %s on node %s deleted (its grace period: a SIGTERM first)", leader, st.Pod, st.Node)
		return st, false, nil
	}

	// The Pod Security of the operator's namespace, where the Job runs;
	// the run's own need not admit it.
	if msg, err := r.privilegedRefusal(ctx); err != nil {
		return st, false, err
	} else if msg != "" {
		return notInjected("a %s needs a privileged signal Job with hostPID on node %s, and %s", f.Action, st.Node, msg)
	}
	var pause time.Duration
	if f.Duration != nil {
		pause = f.Duration.Duration
	}
	job, err := faultjob.Job(run, r.OperatorNamespace, r.WorkerImage, index, repeat, f.Action, pause, pod, faults.ContainerIDs(pod))
	if err != nil {
		return notInjected("%v", err)
	}
	if leader != "" {
		job.Annotations[faultjob.AnnotationLeader] = leader
	}
	if err := r.createPrivileged(ctx, run, job); err != nil {
		switch {
		case apierrors.IsForbidden(err):
			return notInjected("%s", r.privilegedForbidden("signal Job", job.Name, err))
		case errors.Is(err, errNotRunsJob):
			return notInjected("%v", err)
		}
		return st, false, err
	}
	return st, true, nil
}

// errNoConsent: the namespace of the pods a run's faults select no
// longer consents (internal/tenancy).
var errNoConsent = errors.New("no consent")

// faultPods are the pods a target is looked for among: the run's own
// (a managed run), or those spec.cluster.existing.faults selects, in a
// namespace that consents.
func (r *BenchmarkRunReconciler) faultPods(ctx context.Context, run *v1alpha1.BenchmarkRun) ([]corev1.Pod, string, error) {
	ns := run.Namespace
	var sel client.ListOption
	switch {
	case run.Spec.Cluster.Managed != nil:
		sel = client.MatchingLabels(brokerpods.All(run))
	case run.Spec.Cluster.Existing != nil && run.Spec.Cluster.Existing.Faults != nil:
		e := run.Spec.Cluster.Existing
		ns = tenancy.FaultNamespace(run.Namespace, e)
		// Consent was checked when the run started; its owner may have
		// withdrawn it since.
		ok, err := r.consents(ctx, ns, tenancy.AllowFaultsFrom, run.Namespace)
		if err != nil {
			return nil, ns, err
		}
		if !ok {
			return nil, ns, errNoConsent
		}
		if e.Faults.PodSelector != nil {
			s, err := metav1.LabelSelectorAsSelector(e.Faults.PodSelector)
			if err != nil {
				return nil, ns, fmt.Errorf("spec.cluster.existing.faults.podSelector: %w", err)
			}
			sel = client.MatchingLabelsSelector{Selector: s}
		} else if e.StrimziCluster != nil {
			sel = client.MatchingLabels{strimzi.LabelCluster: e.StrimziCluster.Name}
		}
	}
	if sel == nil {
		return nil, ns, nil
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(ns), sel); err != nil {
		return nil, ns, err
	}
	return pods.Items, ns, nil
}

// signalOutcome reads what a signal Job did once it ended, from the
// termination message of the pod it made (privilegedTermination: not any
// pod of its name), and deletes it.
func (r *BenchmarkRunReconciler) signalOutcome(ctx context.Context, run *v1alpha1.BenchmarkRun, job *batchv1.Job, st v1alpha1.FaultStatus) (v1alpha1.FaultStatus, bool, error) {
	st.Pod, st.Node = job.Annotations[faultjob.AnnotationTarget], job.Spec.Template.Spec.NodeName
	done, failed := jobCondition(job, batchv1.JobComplete), jobCondition(job, batchv1.JobFailed)
	if done == nil && failed == nil {
		return st, true, nil
	}
	msg, err := r.privilegedTermination(ctx, run, job)
	if err != nil {
		return st, false, err
	}
	if done != nil {
		var res faults.SignalResult
		if err := json.Unmarshal([]byte(msg), &res); err != nil {
			st.Message = fmt.Sprintf("signal Job %s finished, but what it did is unreadable (%v): %q", job.Name, err, msg)
		} else {
			st.Injected = true
			st.InjectedAt = ptr.To(metav1.NewMicroTime(res.InjectedAt))
			if res.ClearedAt != nil {
				st.ClearedAt = ptr.To(metav1.NewMicroTime(*res.ClearedAt))
			}
			pids := make([]string, len(res.Pids))
			for i, p := range res.Pids {
				pids[i] = strconv.Itoa(p)
			}
			st.Resolved = fmt.Sprintf("%spod %s on node %s: %s to host pids %s", job.Annotations[faultjob.AnnotationLeader], st.Pod, st.Node, res.Signal, strings.Join(pids, ","))
		}
	} else {
		st.Message = fmt.Sprintf("signal Job %s failed (%s: %s)", job.Name, failed.Reason, failed.Message)
		if msg != "" {
			st.Message += ": " + msg
		}
	}
	// Its outcome is in status now (the caller records it); a Job left
	// behind goes when the run finishes (phase_finished.go).
	if _, err := r.deletePrivileged(ctx, run, job.Name); err != nil {
		return st, false, err
	}
	return st, false, nil
}

// watchFaultTargets records when a killed or deleted target is back:
// ready again after the fault (a Kill's container restarted, a
// DeletePod's new pod). back is false while one is not.
func (r *BenchmarkRunReconciler) watchFaultTargets(ctx context.Context, run *v1alpha1.BenchmarkRun) (back bool, err error) {
	back = true
	for _, st := range run.Status.Faults {
		if !st.Injected || st.ClearedAt != nil || st.InjectedAt == nil || st.Pod == "" || st.Action == v1alpha1.FaultPause {
			continue
		}
		ns, name, _ := strings.Cut(st.Pod, "/")
		var pod corev1.Pod
		err := r.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &pod)
		if client.IgnoreNotFound(err) != nil {
			return false, err
		}
		var at *metav1.Time
		if err == nil {
			at = readySince(&pod, st.InjectedAt.Time)
		}
		if at == nil {
			back = false
			continue
		}
		st.ClearedAt = ptr.To(metav1.NewMicroTime(at.Time))
		if err := r.writeFault(ctx, run, st); err != nil {
			return false, err
		}
		note := fmt.Sprintf("fault %d (%s %s, repeat %d) cleared: pod %s ready again %.1f s after it", st.Index, st.Action, st.Target, st.Repeat, st.Pod, at.Sub(st.InjectedAt.Time).Seconds())
		log.FromContext(ctx).Info(note)
		if r.Recorder != nil {
			r.Recorder.Eventf(run, nil, corev1.EventTypeNormal, "FaultCleared", string(run.Status.Phase), "%s", note)
		}
	}
	return back, nil
}

// readySince is when pod became ready at or after t, if it is ready
// now. A pod still ready since before t is the target as it was before
// the fault, not yet seen to go (the kubelet notices a killed container
// a moment later). Conditions keep seconds, so the fault's own second
// counts as after it: no pod becomes ready within a second of its fault.
func readySince(pod *corev1.Pod, t time.Time) *metav1.Time {
	if pod.DeletionTimestamp != nil {
		return nil
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.Time.Before(t.Truncate(time.Second)) {
			return &c.LastTransitionTime
		}
	}
	return nil
}

// faultMissed is the reason of a fault closed by closeFaults.
const faultMissed = "not injected: its time had not come when the measured phase ended (or the coordinator recorded no measured-phase start; its log says why)"

// closeFaults ends the record as the measured phases end: a fault whose
// time never came while the run was running (the phase ended first, the
// coordinator recorded no start, the operator was down) gets its entry,
// not injected, so no fault is missing from status.faults.
func closeFaults(run *v1alpha1.BenchmarkRun, repeats int, reason string) statusTx {
	return func(run *v1alpha1.BenchmarkRun) bool {
		for rep := range max(repeats, 1) {
			for i, f := range run.Spec.Faults {
				if faultEntry(run, i, rep) == nil {
					run.Status.Faults = append(run.Status.Faults, v1alpha1.FaultStatus{
						Index: int32(i), Repeat: faultRepeat(run, rep), Action: f.Action, Target: f.Target, Message: reason,
					})
				}
			}
		}
		return true
	}
}
