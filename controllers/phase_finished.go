package controllers

import (
	"context"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/workers"
)

// reconcileFinished applies spec.teardown to a run that succeeded or failed:
// the policy decides whether brokers and workers go now, and
// ttlSecondsAfterFinished deletes the run itself (and with it the results
// ConfigMap) later. The run's privileged Jobs go now whatever the policy:
// they are the operator's, not the run's to keep (privileged_jobs.go), and
// a Pause still under way lets its target go as its pod ends.
func (r *BenchmarkRunReconciler) reconcileFinished(ctx context.Context, run *v1alpha1.BenchmarkRun) (ctrl.Result, error) {
	if gone, err := r.deleteAllPrivileged(ctx, run, r.Client); err != nil {
		return ctrl.Result{}, err
	} else if !gone {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	if run.WantsTeardown() && !meta.IsStatusConditionTrue(run.Status.Conditions, v1alpha1.ConditionTornDown) {
		done, err := r.teardown(ctx, run)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !done {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		written, err := r.patchStatus(ctx, run, setCondition(v1alpha1.ConditionTornDown, metav1.ConditionTrue, string(run.Spec.Teardown.Policy),
			"brokers and workers removed; the results ConfigMap stays until the run is deleted"))
		if err != nil {
			return ctrl.Result{}, err
		}
		if written {
			r.announce(run, corev1.EventTypeNormal, "TornDown")
		}
	}
	// Archived before the TTL may delete the run, and the ConfigMap with
	// it.
	if done, res, err := r.archiveResults(ctx, run); !done || err != nil {
		return res, err
	}
	if ttl := run.Spec.Teardown.TTLSecondsAfterFinished; ttl != nil && run.Status.CompletionTime != nil {
		expiry := run.Status.CompletionTime.Add(time.Duration(*ttl) * time.Second)
		if left := time.Until(expiry); left > 0 {
			return ctrl.Result{RequeueAfter: left}, nil
		}
		return ctrl.Result{}, client.IgnoreNotFound(r.Delete(ctx, run))
	}
	return ctrl.Result{}, nil
}

// teardown removes the workers and the brokers the run deployed, and its
// privileged Jobs in the operator's namespace (which no owner reference
// removes); the results ConfigMap is left to the run's owner reference.
func (r *BenchmarkRunReconciler) teardown(ctx context.Context, run *v1alpha1.BenchmarkRun) (bool, error) {
	// Listed from the API server: a run deleted a moment after its Job
	// was made must not leave it behind for want of a cache that has
	// seen it.
	privilegedGone, err := r.deleteAllPrivileged(ctx, run, r.apiReader())
	if err != nil {
		return false, err
	}
	sa, role, binding := workers.CoordinatorRBAC(run)
	// Deleting needs only the name; building the Job would fail for a run
	// refused in Pending (its driver file never read), and that run must
	// still be torn down.
	coordinator := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: workers.CoordinatorName(run), Namespace: run.Namespace}}
	// The archiver Job too, for a deleted run (spec.teardown's own pass
	// comes before the archive, when there is no archiver yet): a run
	// deleted mid-upload is not archived.
	archiver := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: workers.ArchiverName(run), Namespace: run.Namespace}}
	workersGone, err := deleteAll(ctx, r.Client, run, coordinator, workers.WorkerJob(run, r.WorkerImage), workers.Service(run), archiver)
	if err != nil {
		return false, err
	}
	// The coordinator's permission to write the results, and the token,
	// go only once its pod is gone: a coordinator stopped mid-run (pod
	// deleted, evicted, the Job's deadline) writes its results within its
	// termination grace period, after the run already failed.
	// Only pods the coordinator Job made count: a look-alike with their
	// labels would keep that permission, and the run's finalizer, for as
	// long as it stays. The Job may be gone already (its UID with it), so
	// its pods are known by their controller's kind and name; the garbage
	// collector deletes a pod whose controller does not exist.
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(run.Namespace), client.MatchingLabels{workers.LabelRun: run.Name, workers.LabelRole: workers.RoleCoord}); err != nil {
		return false, err
	}
	if slices.ContainsFunc(pods.Items, func(p corev1.Pod) bool {
		ref := metav1.GetControllerOf(&p)
		return ref != nil && ref.Kind == "Job" && ref.Name == workers.CoordinatorName(run)
	}) {
		workersGone = false
	} else {
		rbacGone, err := deleteAll(ctx, r.Client, run, binding, role, sa,
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: workers.TokenName(run), Namespace: run.Namespace}})
		if err != nil {
			return false, err
		}
		workersGone = workersGone && rbacGone
	}
	brokersGone, err := r.brokersFor(run).Teardown(ctx, run)
	if err != nil {
		return false, err
	}
	monitorsGone, err := r.deleteMonitors(ctx, run)
	if err != nil {
		return false, err
	}
	return privilegedGone && workersGone && brokersGone && monitorsGone, nil
}

// finalize tears down everything of a deleted run, whatever its policy
// (deleting a run mid-flight stops it), then lets it go.
func (r *BenchmarkRunReconciler) finalize(ctx context.Context, run *v1alpha1.BenchmarkRun) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(run, Finalizer) {
		return ctrl.Result{}, nil
	}
	done, err := r.teardown(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !done {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	orig := run.DeepCopy()
	controllerutil.RemoveFinalizer(run, Finalizer)
	return ctrl.Result{}, r.Patch(ctx, run, client.MergeFrom(orig))
}
