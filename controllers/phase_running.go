package controllers

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/workers"
)

// reconcileRunning watches the coordinator and the workers: the coordinator's
// success moves the run to Collecting; a failed pod, a pod that cannot be
// scheduled or a passed deadline fails it with the reason.
func (r *BenchmarkRunReconciler) reconcileRunning(ctx context.Context, run *v1alpha1.BenchmarkRun) (ctrl.Result, error) {
	jobs := map[string]*batchv1.Job{}
	for _, name := range []string{workers.CoordinatorName(run), workers.WorkerJobName(run)} {
		var job batchv1.Job
		key := types.NamespacedName{Namespace: run.Namespace, Name: name}
		err := r.Get(ctx, key, &job)
		if apierrors.IsNotFound(err) {
			// The cache may not hold a Job created a moment ago: only the
			// API server's answer fails the run.
			err = r.apiReader().Get(ctx, key, &job)
		}
		if apierrors.IsNotFound(err) {
			return r.fail(ctx, run, "JobDeleted", fmt.Sprintf("Job %s was deleted while the run was running", name))
		}
		if err != nil {
			return ctrl.Result{}, err
		}
		if !metav1.IsControlledBy(&job, run) {
			// Made again by someone else, or taken over: its state (a
			// Complete that would move the run on) is not the run's.
			return r.fail(ctx, run, "JobReplaced", fmt.Sprintf(
				"Job %s is no longer controlled by this run (it has %s): it was replaced or taken over while the run was running, and the run cannot tell from it how its workload went; streambench neither uses nor deletes it",
				name, notControlled(&job)))
		}
		jobs[name] = &job
	}
	coordinator, workerJob := jobs[workers.CoordinatorName(run)], jobs[workers.WorkerJobName(run)]
	// Before a finished coordinator moves the run on: its pods still say
	// where they ran (phase_running_placement.go).
	if err := r.recordWorkerPlacement(ctx, run, coordinator, workerJob); err != nil {
		return ctrl.Result{}, err
	}

	if c := jobCondition(coordinator, batchv1.JobComplete); c != nil {
		return ctrl.Result{}, r.moveTo(ctx, run, v1alpha1.PhaseCollecting, "Collecting", "reading the results",
			setCondition(v1alpha1.ConditionWorkersCompleted, metav1.ConditionTrue, "Completed", "the coordinator finished the workload"),
			closeFaults(run, int(run.Spec.Repeats), faultMissed))
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(run.Namespace), client.MatchingLabels{workers.LabelRun: run.Name}); err != nil {
		return ctrl.Result{}, err
	}
	// Only the load generator's pods: a probe pod that failed earlier is
	// recorded in status.testbed, not a failure of the workload; and only
	// pods of the run's two Jobs, not a look-alike with their labels, whose
	// failure (and message) would be the run's (controlledPods).
	var loadPods []corev1.Pod
	for _, p := range controlledPods(pods.Items, coordinator, workerJob) {
		if role := p.Labels[workers.LabelRole]; role == workers.RoleWorker || role == workers.RoleCoord {
			loadPods = append(loadPods, p)
		}
	}
	// The Jobs' own deadline first: it deletes their pods, which must not
	// read as pods deleted by someone.
	for _, job := range []*batchv1.Job{coordinator, workerJob} {
		if c := jobCondition(job, batchv1.JobFailed); c != nil && c.Reason == batchv1.JobReasonDeadlineExceeded {
			return r.fail(ctx, run, "RunTimeout", fmt.Sprintf(
				"Job %s reached its deadline (%s: spec.timeouts.run, or the workload's estimate): %s", job.Name, workers.RunDeadline(run), c.Message))
		}
	}
	if reason, msg := podFailure(loadPods, r.UnschedulableGrace); reason != "" {
		return r.fail(ctx, run, reason, msg)
	}
	for _, job := range []*batchv1.Job{coordinator, workerJob} {
		if c := jobCondition(job, batchv1.JobFailed); c != nil {
			return r.fail(ctx, run, "JobFailed", fmt.Sprintf("Job %s failed: %s: %s", job.Name, c.Reason, c.Message))
		}
		// A pod of the Job failed or went (deleted) and is gone already;
		// with backoffLimit 0 the Job will fail, but only once its other
		// pods ended. The run cannot go on without it.
		if job.Status.Failed > 0 {
			return r.fail(ctx, run, "JobFailed", fmt.Sprintf("a pod of Job %s failed or was deleted (%d failed; a worker or coordinator cannot be replaced mid-run)", job.Name, job.Status.Failed))
		}
	}

	// The coordinator may be waiting for a page-cache drop before it
	// drains a backlog.
	wait, err := r.reconcilePageCacheRequest(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	// spec.faults that are due (phase_running_faults.go).
	faultWait, err := r.reconcileFaults(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	if faultWait > 0 && (wait == 0 || faultWait < wait) {
		wait = faultWait
	}

	// The Jobs' activeDeadlineSeconds should act first; the controller's own
	// check allows them a tenth of the deadline (at most a minute) to do so.
	limit := workers.RunDeadline(run)
	deadline := enteredAt(run, v1alpha1.PhaseRunning).Add(limit + min(limit/10, time.Minute))
	if time.Now().After(deadline) {
		return r.fail(ctx, run, "RunTimeout", fmt.Sprintf(
			"the workload did not finish within its deadline (%s: spec.timeouts.run, or warm-up + test duration + 10m, plus the backlog build and drain allowance for a backlog test)", workers.RunDeadline(run)))
	}
	next := min(pollInterval, time.Until(deadline)+time.Second)
	if wait > 0 {
		next = min(next, wait)
	}
	return ctrl.Result{RequeueAfter: next}, nil
}

// enteredAt is when the run entered phase p (status.phaseTimes, so a
// restarted operator knows it too). A status written by an operator that
// did not record it counts from the run's start: a deadline must fire.
func enteredAt(run *v1alpha1.BenchmarkRun, p v1alpha1.Phase) time.Time {
	if t, ok := run.Status.EnteredAt(p); ok {
		return t
	}
	if run.Status.StartTime != nil {
		return run.Status.StartTime.Time
	}
	return run.CreationTimestamp.Time
}

func jobCondition(job *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range job.Status.Conditions {
		if c := &job.Status.Conditions[i]; c.Type == t && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

// podFailure names the first failed or long-unschedulable pod of the run,
// with what its containers said, so status.message tells the user why.
func podFailure(pods []corev1.Pod, grace time.Duration) (reason, message string) {
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	for _, p := range pods {
		role := p.Labels[workers.LabelRole]
		if p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded {
			// Deleted, evicted or drained mid-run: a worker's producers
			// cannot be restarted, so the run cannot go on.
			return strings.ToUpper(role[:1]) + role[1:] + "Deleted", fmt.Sprintf("%s pod %s was deleted while the run was running (by a user, an eviction or a node drain); what the coordinator wrote so far is kept, marked partial", role, p.Name)
		}
		if p.Status.Phase == corev1.PodFailed {
			return strings.ToUpper(role[:1]) + role[1:] + "Failed", fmt.Sprintf("%s pod %s failed: %s", role, p.Name, containerFailure(p))
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable &&
				time.Since(c.LastTransitionTime.Time) >= grace {
				return "Unschedulable", fmt.Sprintf("%s pod %s cannot be scheduled: %s (check spec.workers.resources and spec.workers.placement)", role, p.Name, c.Message)
			}
		}
	}
	return "", ""
}

func containerFailure(p corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			msg := fmt.Sprintf("container %s exited with code %d (%s)", cs.Name, t.ExitCode, t.Reason)
			if t.Message != "" {
				msg += ": " + strings.TrimSpace(t.Message)
			}
			return msg
		}
	}
	if p.Status.Message != "" {
		return p.Status.Reason + ": " + p.Status.Message
	}
	return "phase Failed"
}
