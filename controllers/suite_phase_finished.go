package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// finishSuite ends a suite whose cells are all finished: the clusters go
// (by policy), then the phase is Succeeded when every cell succeeded and
// Failed otherwise, with the failed cells named.
func (r *BenchmarkSuiteReconciler) finishSuite(ctx context.Context, s *v1alpha1.BenchmarkSuite) (ctrl.Result, error) {
	if done, err := r.teardownFinishedClusters(ctx, s); err != nil || !done {
		return ctrl.Result{RequeueAfter: time.Second}, err
	}
	if err := r.writeSuiteResults(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	var failed, skipped []string
	for _, c := range s.Status.Cells {
		switch c.Phase {
		case v1alpha1.CellFailed:
			failed = append(failed, c.Name)
		case v1alpha1.CellSkipped:
			skipped = append(skipped, c.Name)
		}
	}
	if len(failed) == 0 {
		return ctrl.Result{RequeueAfter: again}, r.moveSuiteTo(ctx, s, v1alpha1.PhaseSucceeded, "Succeeded",
			fmt.Sprintf("all %d cells succeeded; tables in ConfigMap %s", len(s.Status.Cells), s.Status.ResultsRef))
	}
	msg := fmt.Sprintf("%d of %d cells failed: %s", len(failed), len(s.Status.Cells), strings.Join(failed, ", "))
	if len(skipped) > 0 {
		msg += fmt.Sprintf("; %d skipped (failurePolicy Stop)", len(skipped))
	}
	return ctrl.Result{RequeueAfter: again}, r.moveSuiteTo(ctx, s, v1alpha1.PhaseFailed, "CellsFailed", msg+"; results of the others in ConfigMap "+s.Status.ResultsRef)
}

// teardownFinishedClusters removes, by spec.teardown.policy, every managed
// cluster whose cells are all finished, and reports whether none is still
// going. Always removes it; OnSuccess keeps it when one of its cells
// failed (for inspection); Never keeps it.
func (r *BenchmarkSuiteReconciler) teardownFinishedClusters(ctx context.Context, s *v1alpha1.BenchmarkSuite) (bool, error) {
	allDone, changed := true, false
	for i := range s.Status.Clusters {
		cl := &s.Status.Clusters[i]
		if !cl.Managed || cl.Phase == v1alpha1.ClusterTornDown || cl.Phase == v1alpha1.ClusterKept || cl.Phase == v1alpha1.ClusterWaiting {
			continue
		}
		finished, succeeded := true, true
		for _, c := range s.Status.Cells {
			if c.Cluster == cl.Name {
				finished = finished && c.Phase.Finished()
				succeeded = succeeded && c.Phase == v1alpha1.CellSucceeded
			}
		}
		if !finished {
			continue
		}
		policy := s.Spec.Teardown.Policy
		if policy == v1alpha1.TeardownNever || (policy == v1alpha1.TeardownOnSuccess && !succeeded) {
			cl.Phase, cl.Message, changed = v1alpha1.ClusterKept, fmt.Sprintf("kept by spec.teardown.policy %s", policy), true
			continue
		}
		done, err := r.teardownCluster(ctx, s, *cl)
		if err != nil {
			return false, err
		}
		if !done {
			allDone = false
			continue
		}
		msg := "removed: its cells are finished"
		if cl.Phase == v1alpha1.ClusterFailed {
			// Keep why it failed: TornDown alone would hide it.
			msg = "removed after it failed: " + cl.Message
		}
		cl.Phase, cl.Endpoints, cl.Message, changed = v1alpha1.ClusterTornDown, nil, msg, true
	}
	if changed {
		if err := r.updateSuiteStatus(ctx, s, corev1.EventTypeNormal, "ClustersTornDown"); err != nil {
			return false, err
		}
	}
	return allDone, nil
}

func (r *BenchmarkSuiteReconciler) teardownCluster(ctx context.Context, s *v1alpha1.BenchmarkSuite, cl v1alpha1.SuiteCluster) (bool, error) {
	host, b, err := r.hostBrokers(s, cl)
	if err != nil {
		return true, nil // nothing can have been deployed from it
	}
	return b.Teardown(ctx, host)
}

// reconcileSuiteFinished deletes the suite ttlSecondsAfterFinished after it
// ended; its child runs and results ConfigMaps go with it.
func (r *BenchmarkSuiteReconciler) reconcileSuiteFinished(ctx context.Context, s *v1alpha1.BenchmarkSuite) (ctrl.Result, error) {
	if ttl := s.Spec.Teardown.TTLSecondsAfterFinished; ttl != nil && s.Status.CompletionTime != nil {
		if left := time.Until(s.Status.CompletionTime.Add(time.Duration(*ttl) * time.Second)); left > 0 {
			return ctrl.Result{RequeueAfter: left}, nil
		}
		return ctrl.Result{}, client.IgnoreNotFound(r.Delete(ctx, s))
	}
	return ctrl.Result{}, nil
}

// finalizeSuite removes every cluster the suite deployed, whatever the
// policy (deleting a suite stops it), then lets it go; the child runs go
// by garbage collection and tear their workers down themselves.
func (r *BenchmarkSuiteReconciler) finalizeSuite(ctx context.Context, s *v1alpha1.BenchmarkSuite) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(s, Finalizer) {
		return ctrl.Result{}, nil
	}
	for _, cl := range s.Status.Clusters {
		if !cl.Managed || cl.Phase == v1alpha1.ClusterTornDown || cl.Phase == v1alpha1.ClusterWaiting {
			continue
		}
		done, err := r.teardownCluster(ctx, s, cl)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !done {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
	}
	orig := s.DeepCopy()
	controllerutil.RemoveFinalizer(s, Finalizer)
	return ctrl.Result{}, r.Patch(ctx, s, client.MergeFrom(orig))
}

// setOwner makes the suite the controller of obj (its results ConfigMap).
func setOwner(s *v1alpha1.BenchmarkSuite, obj client.Object, scheme *runtime.Scheme) error {
	return controllerutil.SetControllerReference(s, obj, scheme)
}
