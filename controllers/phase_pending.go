package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
)

// reconcileNew takes a run that has no phase yet: it translates the declared
// durability into the system's settings, records them (and any downgrade) in
// status, and moves the run to Pending.
func (r *BenchmarkRunReconciler) reconcileNew(ctx context.Context, run *v1alpha1.BenchmarkRun) (ctrl.Result, error) {
	eff, err := durability.Translate(run.Spec.System, run.Spec.DurabilityOrDefault())
	if err != nil {
		// The API server's validation should make this unreachable; a spec
		// that slipped through (an older CRD) fails with the reason.
		run.MoveTo(v1alpha1.PhaseFailed, err.Error())
		run.SetCondition(v1alpha1.ConditionFailed, metav1.ConditionTrue, v1alpha1.ReasonInvalid, err.Error())
		run.SetCondition(v1alpha1.ConditionDurabilityResolved, metav1.ConditionFalse, v1alpha1.ReasonInvalid, err.Error())
		now := metav1.Now()
		run.Status.CompletionTime = &now
		return ctrl.Result{}, r.updateStatus(ctx, run, corev1.EventTypeWarning, v1alpha1.ReasonInvalid)
	}

	run.Status.Durability = &eff
	run.Status.ObservedGeneration = run.Generation
	reason, msg := v1alpha1.ReasonTranslated, fmt.Sprintf("durability level %d in effect", eff.AchievedLevel)
	eventType := corev1.EventTypeNormal
	if eff.AchievedLevel != eff.RequestedLevel {
		reason = v1alpha1.ReasonLevelDowngraded
		msg = fmt.Sprintf("durability level %d requested, level %d achieved: %s", eff.RequestedLevel, eff.AchievedLevel, eff.Explanation)
		eventType = corev1.EventTypeWarning
	}
	run.SetCondition(v1alpha1.ConditionDurabilityResolved, metav1.ConditionTrue, reason, msg)
	run.MoveTo(v1alpha1.PhasePending, msg)
	return ctrl.Result{}, r.updateStatus(ctx, run, eventType, reason)
}

// updateStatus writes the status and announces the phase change with an
// event.
func (r *BenchmarkRunReconciler) updateStatus(ctx context.Context, run *v1alpha1.BenchmarkRun, eventType, reason string) error {
	if err := r.Status().Update(ctx, run); err != nil {
		return err
	}
	if r.Recorder != nil {
		r.Recorder.Eventf(run, nil, eventType, reason, string(run.Status.Phase), "%s", run.Status.Message)
	}
	return nil
}
