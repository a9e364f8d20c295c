package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/privileged"
	"github.com/streambench/streambench-operator/internal/provision/workers"
)

// The privileged Jobs of a run: the fault signal Job
// (phase_running_faults.go) and the page-cache drop Jobs
// (phase_provisioning_testbed.go, phase_running_pagecache.go). They run
// in the operator's namespace, never the run's (issue 58): in the run's
// namespace whoever may exec into pods there could enter a privileged
// hostPID pod on a node for as long as it lives (a Pause's, its pause
// and two minutes), and the tenant would have to let their namespace
// admit privileged pods. An owner reference cannot cross namespaces, so
// each Job carries its run's UID, namespace and name as labels
// (internal/provision/privileged); the operator finds a Job by its name
// and that UID, reads only the pod that Job made, and deletes the Jobs
// when done with them, when the run finishes (whatever spec.teardown says)
// and when it is deleted.

// errNotRunsJob is a Job in the operator's namespace whose name the run
// wants and which is not the run's.
var errNotRunsJob = errors.New("not this run's")

// privilegedRefusal says why the operator's namespace does not admit the
// privileged Jobs, "" when it does: the message is for the cluster's
// admin and names that namespace, never the run's.
func (r *BenchmarkRunReconciler) privilegedRefusal(ctx context.Context) (string, error) {
	if r.OperatorNamespace == "" {
		return "the operator was started without --operator-namespace, the namespace its privileged Jobs run in; a cluster admin starts it with --operator-namespace (the chart sets its release namespace)", nil
	}
	var ns corev1.Namespace
	if err := r.Get(ctx, types.NamespacedName{Name: r.OperatorNamespace}, &ns); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Sprintf("the operator's namespace %s, where it runs its privileged Jobs, does not exist; a cluster admin installs the operator there (--operator-namespace, the chart's release namespace)", r.OperatorNamespace), nil
		}
		return "", err
	}
	if ok, msg := privileged.Allowed(ns.Name, ns.Labels); !ok {
		return msg, nil
	}
	return "", nil
}

// runsPrivileged says whether obj is one of run's privileged Jobs (or
// their pods): in the operator's namespace, with run's UID. Not the name
// alone: that the run cannot keep anyone else from taking.
func (r *BenchmarkRunReconciler) runsPrivileged(run *v1alpha1.BenchmarkRun, obj client.Object) bool {
	return run.UID != "" && obj.GetNamespace() == r.OperatorNamespace && obj.GetLabels()[privileged.LabelRunUID] == string(run.UID)
}

// createPrivileged creates job, a builder's in the operator's namespace,
// for run. A Job of that name that run made already (a restarted
// operator, a retried reconcile) is left as it is; one that is not run's
// is never adopted: the error names it (errNotRunsJob).
func (r *BenchmarkRunReconciler) createPrivileged(ctx context.Context, run *v1alpha1.BenchmarkRun, job *batchv1.Job) error {
	if !r.runsPrivileged(run, job) {
		return fmt.Errorf("Job %s/%s is not built as run %s/%s's privileged Job in the operator's namespace %s", job.Namespace, job.Name, run.Namespace, run.Name, r.OperatorNamespace)
	}
	err := r.Create(ctx, job)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	// The API server's copy: the cache may not hold a Job created a
	// moment ago.
	var existing batchv1.Job
	if err := r.apiReader().Get(ctx, client.ObjectKeyFromObject(job), &existing); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("Job %s/%s was deleted while it was created; trying again", job.Namespace, job.Name)
		}
		return err
	}
	if !r.runsPrivileged(run, &existing) {
		return fmt.Errorf("Job %s/%s exists and is %w (its label %s is %q, not %s): streambench neither uses nor deletes it; a cluster admin deletes it if it is a leftover",
			job.Namespace, job.Name, errNotRunsJob, privileged.LabelRunUID, existing.Labels[privileged.LabelRunUID], run.UID)
	}
	return nil
}

// privilegedJob reads run's privileged Job name from the operator's
// namespace. A Job of that name without run's UID is not found: it is
// not run's.
func (r *BenchmarkRunReconciler) privilegedJob(ctx context.Context, run *v1alpha1.BenchmarkRun, name string) (*batchv1.Job, error) {
	var job batchv1.Job
	if err := r.Get(ctx, types.NamespacedName{Namespace: r.OperatorNamespace, Name: name}, &job); err != nil {
		return nil, err
	}
	if !r.runsPrivileged(run, &job) {
		return nil, apierrors.NewNotFound(batchv1.Resource("jobs"), name)
	}
	return &job, nil
}

// privilegedTermination is the termination message job's pod left: read
// only from a pod in the operator's namespace with run's UID that job
// itself (by its UID) controls. A pod that merely carries the Job's
// job-name label is someone else's, and what it says is not the Job's
// outcome.
func (r *BenchmarkRunReconciler) privilegedTermination(ctx context.Context, run *v1alpha1.BenchmarkRun, job *batchv1.Job) (string, error) {
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(r.OperatorNamespace), client.MatchingLabels(privileged.Of(run))); err != nil {
		return "", err
	}
	var msg string
	for i := range pods.Items {
		p := &pods.Items[i]
		ref := metav1.GetControllerOf(p)
		if ref == nil || ref.UID != job.UID || ref.Kind != "Job" || !r.runsPrivileged(run, p) {
			continue
		}
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil && t.Message != "" {
				msg = strings.TrimSpace(t.Message)
			}
		}
	}
	return msg, nil
}

// deletePrivileged deletes those of the named Jobs that are run's, in the
// background (their pods go with them: a Pause's pod, terminated, lets its
// target go), and says whether all of them were gone already.
func (r *BenchmarkRunReconciler) deletePrivileged(ctx context.Context, run *v1alpha1.BenchmarkRun, names ...string) (bool, error) {
	gone := true
	for _, name := range names {
		job, err := r.privilegedJob(ctx, run, name)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return false, err
		}
		deleted, err := r.deleteJob(ctx, job)
		if err != nil {
			return false, err
		}
		gone = gone && !deleted
	}
	return gone, nil
}

// deleteAllPrivileged deletes every privileged Job of run, found by its
// UID, and says whether none was left. reader is the cache, or the API
// server where a Job created a moment ago must not be missed (a run
// being deleted).
func (r *BenchmarkRunReconciler) deleteAllPrivileged(ctx context.Context, run *v1alpha1.BenchmarkRun, reader client.Reader) (bool, error) {
	if r.OperatorNamespace == "" || run.UID == "" {
		return true, nil
	}
	var jobs batchv1.JobList
	if err := reader.List(ctx, &jobs, client.InNamespace(r.OperatorNamespace), client.MatchingLabels(privileged.Of(run))); err != nil {
		return false, fmt.Errorf("listing run %s/%s's privileged Jobs in the operator's namespace %s: %w", run.Namespace, run.Name, r.OperatorNamespace, err)
	}
	gone := true
	for i := range jobs.Items {
		deleted, err := r.deleteJob(ctx, &jobs.Items[i])
		if err != nil {
			return false, err
		}
		gone = gone && !deleted
	}
	return gone, nil
}

// deleteJob deletes job in the background unless it is being deleted
// already; deleted says a deletion is under way. The UID precondition
// keeps it from hitting a Job that replaced the one read.
func (r *BenchmarkRunReconciler) deleteJob(ctx context.Context, job *batchv1.Job) (deleted bool, err error) {
	if job.DeletionTimestamp != nil {
		return true, nil
	}
	err = r.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: ptr.To(job.UID)})
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

// privilegedJobRun maps a privileged Job in the operator's namespace to
// its run, by its labels (no owner reference crosses namespaces): a
// finished signal or drop Job moves its run on at once.
func (r *BenchmarkRunReconciler) privilegedJobRun(_ context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	if r.OperatorNamespace == "" || obj.GetNamespace() != r.OperatorNamespace || l[privileged.LabelRunUID] == "" || l[privileged.LabelRunNamespace] == "" || l[workers.LabelRun] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: l[privileged.LabelRunNamespace], Name: l[workers.LabelRun]}}}
}

// privilegedForbidden is the message of a privileged Job the operator may
// not create in its namespace (RBAC, an admission policy).
func (r *BenchmarkRunReconciler) privilegedForbidden(what, name string, err error) string {
	return fmt.Sprintf("the operator may not create %s %s in its namespace %s (%v); a cluster admin grants its ServiceAccount jobs create, get, list, watch and delete and pods get, list and watch there, as the chart does (its ClusterRole, or with watchNamespaces its Role in the release namespace)",
		what, name, r.OperatorNamespace, err)
}
