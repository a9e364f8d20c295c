package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/archive"
	"github.com/streambench/streambench-operator/internal/provision/workers"
	"github.com/streambench/streambench-operator/internal/report"
)

// archiveRetry is how long the operator waits before it uploads again to
// the default archive after a failed attempt (doubled for each next one),
// or looks again at an archiver Job still trying.
func (r *BenchmarkRunReconciler) archiveRetry() time.Duration {
	if r.ArchiveRetry > 0 {
		return r.ArchiveRetry
	}
	return 5 * time.Second
}

// archiveOf is where a finished run's results go: its spec.results.archive,
// else the operator's default (the chart's archive values), else nowhere
// (nil). byOperator is true for the default, which the operator uploads
// to itself: its endpoint and credentials are the administrator's, and a
// tenant names neither.
func (r *BenchmarkRunReconciler) archiveOf(run *v1alpha1.BenchmarkRun) (a *v1alpha1.ArchiveSpec, byOperator bool) {
	if run.Spec.Results != nil && run.Spec.Results.Archive != nil {
		return run.Spec.Results.Archive, false
	}
	return r.DefaultArchive, r.DefaultArchive != nil
}

// archivePath is the run's place in its archive: runs/<namespace>/<run>/
// <created>. A run made again under the same name has another creation
// time, so it never lands on the first one's files.
func archivePath(run *v1alpha1.BenchmarkRun) string {
	return archive.RunPath(run.Namespace, run.Name, run.CreationTimestamp.Time)
}

// archiveResults copies a finished run's results into its archive, once:
// done is false while that is under way (the caller requeues with res).
// A run without results (failed before its load) or without an archive
// has nothing to do; one whose archive failed ArchiveAttempts times is
// left with condition Archived False, its results still in the
// ConfigMap.
func (r *BenchmarkRunReconciler) archiveResults(ctx context.Context, run *v1alpha1.BenchmarkRun) (done bool, res ctrl.Result, err error) {
	a, byOperator := r.archiveOf(run)
	if a == nil || run.Status.ResultsRef == "" {
		return true, ctrl.Result{}, nil
	}
	if c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionArchived); c != nil &&
		(c.Status == metav1.ConditionTrue || c.Reason == v1alpha1.ReasonArchiveAbandoned) {
		return true, ctrl.Result{}, nil
	}
	url := strings.TrimSuffix(a.URL, "/") + "/" + archivePath(run)
	if byOperator {
		return r.archiveByOperator(ctx, run, *a, url)
	}
	return r.archiveByJob(ctx, run, *a, url)
}

// archiveByOperator uploads the results ConfigMap's files to the default
// archive from the operator's process.
func (r *BenchmarkRunReconciler) archiveByOperator(ctx context.Context, run *v1alpha1.BenchmarkRun, a v1alpha1.ArchiveSpec, url string) (bool, ctrl.Result, error) {
	attempts := int32(1)
	if s := run.Status.Archive; s != nil {
		attempts = s.Attempts + 1
	}
	n, uerr := r.uploadDefault(ctx, run, a)
	if uerr == nil {
		return true, ctrl.Result{}, r.archived(ctx, run, url, int32(n), attempts)
	}
	return r.archiveFailed(ctx, run, url, attempts, uerr.Error())
}

// uploadDefault writes the run's results, as the files `streambench
// report` lays out, into the default archive with the credentials of its
// Secret in the operator's namespace (read from the API server: the
// operator caches no Secret).
func (r *BenchmarkRunReconciler) uploadDefault(ctx context.Context, run *v1alpha1.BenchmarkRun, a v1alpha1.ArchiveSpec) (int, error) {
	cm, foreign, err := runResults(ctx, r.apiReader(), run)
	if err != nil {
		return 0, fmt.Errorf("reading the results ConfigMap: %w", err)
	}
	if foreign != "" {
		return 0, fmt.Errorf("%s", foreign)
	}
	files, err := report.ConfigMapFiles(cm.Data, cm.BinaryData, run.Status.Faults)
	if err != nil {
		return 0, err
	}
	loc, err := archive.ParseLocation(a.URL)
	if err != nil {
		return 0, err
	}
	o := archive.S3Options{Endpoint: a.Endpoint, Region: a.Region, PathStyle: a.PathStyle}
	if a.CredentialsSecret != "" {
		var s corev1.Secret
		key := types.NamespacedName{Namespace: r.OperatorNamespace, Name: a.CredentialsSecret}
		if err := r.apiReader().Get(ctx, key, &s); err != nil {
			return 0, fmt.Errorf("the default archive's credentials, Secret %s: %w", key, err)
		}
		o.AccessKeyID = string(s.Data[v1alpha1.ArchiveAccessKeyID])
		o.SecretAccessKey = string(s.Data[v1alpha1.ArchiveSecretAccessKey])
		o.SessionToken = string(s.Data[v1alpha1.ArchiveSessionToken])
	}
	store, err := archive.Open(ctx, loc, o)
	if err != nil {
		return 0, err
	}
	if err := archive.Upload(ctx, store, archivePath(run), files); err != nil {
		return 0, err
	}
	return len(files), nil
}

// archiveByJob runs the archiver Job in the run's namespace
// (workers.ArchiverJob) and records how it went.
func (r *BenchmarkRunReconciler) archiveByJob(ctx context.Context, run *v1alpha1.BenchmarkRun, a v1alpha1.ArchiveSpec, url string) (bool, ctrl.Result, error) {
	var job batchv1.Job
	key := types.NamespacedName{Namespace: run.Namespace, Name: workers.ArchiverName(run)}
	err := r.apiReader().Get(ctx, key, &job)
	if apierrors.IsNotFound(err) {
		j := workers.ArchiverJob(run, r.WorkerImage, a, archivePath(run))
		if err := controllerutil.SetControllerReference(run, j, r.Scheme); err != nil {
			return false, ctrl.Result{}, err
		}
		if err := r.Create(ctx, j); err != nil && !apierrors.IsAlreadyExists(err) {
			return false, ctrl.Result{}, fmt.Errorf("creating archiver Job %s: %w", key, err)
		}
		return false, ctrl.Result{RequeueAfter: r.archiveRetry()}, nil
	}
	if err != nil {
		return false, ctrl.Result{}, err
	}
	if !metav1.IsControlledBy(&job, run) {
		// A look-alike of the tenant's: never read as the run's outcome.
		return true, ctrl.Result{}, r.abandon(ctx, run, url, 0, fmt.Sprintf("Job %s is not this run's archiver; delete it and the run archives on its next start", key))
	}
	msg, stuck := r.lastArchiverMessage(ctx, run)
	attempts := job.Status.Failed
	switch {
	case job.Status.Succeeded > 0:
		var n int32
		_, _ = fmt.Sscanf(msg, "archived %d files", &n)
		return true, ctrl.Result{}, r.archived(ctx, run, url, n, attempts+1)
	case jobFailed(&job):
		return true, ctrl.Result{}, r.abandon(ctx, run, url, attempts, msg)
	case attempts > 0 && (run.Status.Archive == nil || run.Status.Archive.Attempts < attempts):
		_, res, err := r.archiveFailed(ctx, run, url, attempts, msg)
		return false, res, err
	case stuck && !archiveFailedSays(run, msg):
		// A pod that cannot start (a Secret or key missing) counts as no
		// attempt, and would wait silently for the Job's deadline.
		_, res, err := r.archiveFailed(ctx, run, url, attempts, msg)
		return false, res, err
	}
	return false, ctrl.Result{RequeueAfter: r.archiveRetry()}, nil
}

// archiveFailedSays reports whether condition Archived already carries
// msg.
func archiveFailedSays(run *v1alpha1.BenchmarkRun, msg string) bool {
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionArchived)
	return c != nil && strings.HasSuffix(c.Message, msg)
}

// jobFailed reports whether job gave up (its backoff limit or deadline).
func jobFailed(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// lastArchiverMessage is the termination message of the run's archiver
// pod that ended last: "archived N files to …", or the error it failed
// with; stuck when no pod ended and one cannot start (its container
// waits with a message, e.g. CreateContainerConfigError).
func (r *BenchmarkRunReconciler) lastArchiverMessage(ctx context.Context, run *v1alpha1.BenchmarkRun) (msg string, stuck bool) {
	var pods corev1.PodList
	// From the API server: the Job's count may reach the controller before
	// the cache has the pod that ended, and its message with it.
	if err := r.apiReader().List(ctx, &pods, client.InNamespace(run.Namespace), client.MatchingLabels{workers.LabelRun: run.Name, workers.LabelRole: workers.RoleArchiver}); err != nil {
		return err.Error(), false
	}
	var last time.Time
	msg = "the archiver pod left no message"
	for _, p := range pods.Items {
		if ref := metav1.GetControllerOf(&p); ref == nil || ref.Kind != "Job" || ref.Name != workers.ArchiverName(run) {
			continue
		}
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil && !t.FinishedAt.Time.Before(last) {
				last, msg = t.FinishedAt.Time, strings.TrimSpace(t.Message)
			}
			if w := cs.State.Waiting; w != nil && w.Message != "" && last.IsZero() && w.Reason != "ContainerCreating" {
				// e.g. CreateContainerConfigError: the Secret or a key of it
				// is missing.
				msg, stuck = w.Reason+": "+w.Message, true
			}
		}
	}
	return msg, stuck && last.IsZero()
}

// archived records the archive done: condition Archived True and
// status.archive.
func (r *BenchmarkRunReconciler) archived(ctx context.Context, run *v1alpha1.BenchmarkRun, url string, files, attempts int32) error {
	written, err := r.patchStatus(ctx, run, func(run *v1alpha1.BenchmarkRun) bool {
		run.Status.Archive = &v1alpha1.ArchiveStatus{URL: url, Files: files, Attempts: attempts}
		return true
	}, setCondition(v1alpha1.ConditionArchived, metav1.ConditionTrue, v1alpha1.ReasonArchived, fmt.Sprintf("%d result files archived to %s", files, url)))
	if err == nil && written && r.Recorder != nil {
		r.Recorder.Eventf(run, nil, corev1.EventTypeNormal, v1alpha1.ReasonArchived, string(run.Status.Phase), "%d result files archived to %s", files, url)
	}
	return err
}

// archiveFailed records a failed attempt (condition Archived False,
// reason ArchiveFailed, and a warning), or gives up after ArchiveAttempts.
func (r *BenchmarkRunReconciler) archiveFailed(ctx context.Context, run *v1alpha1.BenchmarkRun, url string, attempts int32, msg string) (bool, ctrl.Result, error) {
	if attempts >= v1alpha1.ArchiveAttempts {
		return true, ctrl.Result{}, r.abandon(ctx, run, url, attempts, msg)
	}
	what := fmt.Sprintf("attempt %d of %d", attempts, v1alpha1.ArchiveAttempts)
	if attempts == 0 {
		what = "its pod cannot start"
	}
	text := fmt.Sprintf("archiving to %s failed (%s; the results stay in ConfigMap %s): %s", url, what, run.Status.ResultsRef, msg)
	written, err := r.patchStatus(ctx, run, func(run *v1alpha1.BenchmarkRun) bool {
		run.Status.Archive = &v1alpha1.ArchiveStatus{URL: url, Attempts: attempts}
		return true
	}, setCondition(v1alpha1.ConditionArchived, metav1.ConditionFalse, v1alpha1.ReasonArchiveFailed, text))
	if err == nil && written && r.Recorder != nil {
		r.Recorder.Eventf(run, nil, corev1.EventTypeWarning, v1alpha1.ReasonArchiveFailed, string(run.Status.Phase), "%s", text)
	}
	// The default archive's next attempt waits longer each time.
	return false, ctrl.Result{RequeueAfter: r.archiveRetry() * time.Duration(1<<attempts)}, err
}

// abandon records the archive given up: condition Archived False, reason
// ArchiveAbandoned, the results in the ConfigMap only.
func (r *BenchmarkRunReconciler) abandon(ctx context.Context, run *v1alpha1.BenchmarkRun, url string, attempts int32, msg string) error {
	text := fmt.Sprintf("the results were not archived to %s after %d attempts; they stay in ConfigMap %s until the run is deleted: %s", url, attempts, run.Status.ResultsRef, msg)
	written, err := r.patchStatus(ctx, run, func(run *v1alpha1.BenchmarkRun) bool {
		run.Status.Archive = &v1alpha1.ArchiveStatus{URL: url, Attempts: attempts}
		return true
	}, setCondition(v1alpha1.ConditionArchived, metav1.ConditionFalse, v1alpha1.ReasonArchiveAbandoned, text))
	if err == nil && written && r.Recorder != nil {
		r.Recorder.Eventf(run, nil, corev1.EventTypeWarning, v1alpha1.ReasonArchiveAbandoned, string(run.Status.Phase), "%s", text)
	}
	return err
}
