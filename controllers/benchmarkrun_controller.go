// Package controllers holds the BenchmarkRun reconciler. Reconcile fetches the
// run and hands it to the step of its phase; each phase lives in its own file
// (phase_<name>.go), so the folder reads as the life of a run.
package controllers

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// BenchmarkRunReconciler reconciles BenchmarkRun objects.
type BenchmarkRunReconciler struct {
	client.Client
	Scheme   *runtime.Scheme
	Recorder events.EventRecorder
	// WorkerImage is the streambench image the worker and coordinator Jobs
	// use unless a run overrides it.
	WorkerImage string
}

// +kubebuilder:rbac:groups=streambench.io,resources=benchmarkruns,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=streambench.io,resources=benchmarkruns/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=streambench.io,resources=benchmarkruns/finalizers,verbs=update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile moves one run one step forward.
func (r *BenchmarkRunReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	var run v1alpha1.BenchmarkRun
	if err := r.Get(ctx, req.NamespacedName, &run); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if !run.DeletionTimestamp.IsZero() || run.Status.Phase.Finished() {
		return ctrl.Result{}, nil
	}
	switch run.Status.Phase {
	case "":
		return r.reconcileNew(ctx, &run)
	default:
		// Provisioning, running and collecting arrive with the controller
		// issue; until then a run waits in Pending with its durability
		// resolved.
		log.V(1).Info("phase has no step yet", "phase", run.Status.Phase)
		return ctrl.Result{}, nil
	}
}

// SetupWithManager registers the reconciler with the manager.
func (r *BenchmarkRunReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.BenchmarkRun{}).
		Named("benchmarkrun").
		Complete(r)
}
