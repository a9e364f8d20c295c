package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
	"github.com/streambench/streambench-operator/internal/suite"
)

// BenchmarkSuiteReconciler reconciles BenchmarkSuites: it deploys each
// system's clusters (once per broker setting the cells need), runs the
// cells one at a time as child BenchmarkRuns in existing mode against them,
// and removes the clusters. Its phases are files too: suite_phase_new.go
// (plan), suite_phase_running.go (clusters and cells), suite_phase_finished.go
// (teardown, TTL, deletion). All state is in status, so a restarted
// operator continues a suite where it was.
type BenchmarkSuiteReconciler struct {
	client.Client
	Scheme   *runtime.Scheme
	Recorder events.EventRecorder
	// Helm installs the suite's managed Pulsar clusters; share the run
	// reconciler's, so one Installer tracks every release.
	Helm *pulsar.Installer
	// APIReader reads the workload ConfigMaps and, before a status write,
	// the suite itself (see BenchmarkRunReconciler).
	APIReader client.Reader
}

// apiReader reads from the API server itself, not the cache.
func (r *BenchmarkSuiteReconciler) apiReader() client.Reader {
	if r.APIReader != nil {
		return r.APIReader
	}
	return r.Client
}

// +kubebuilder:rbac:groups=streambench.io,resources=benchmarksuites,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=streambench.io,resources=benchmarksuites/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=streambench.io,resources=benchmarksuites/finalizers,verbs=update
// +kubebuilder:rbac:groups=streambench.io,resources=benchmarkruns,verbs=create

// Reconcile moves one suite one step forward.
func (r *BenchmarkSuiteReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var s v1alpha1.BenchmarkSuite
	if err := r.Get(ctx, req.NamespacedName, &s); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !s.DeletionTimestamp.IsZero() {
		return r.finalizeSuite(ctx, &s)
	}
	if !controllerutil.ContainsFinalizer(&s, Finalizer) {
		// A patch, for the reason given in BenchmarkRunReconciler.Reconcile.
		orig := s.DeepCopy()
		controllerutil.AddFinalizer(&s, Finalizer)
		if err := r.Patch(ctx, &s, client.MergeFrom(orig)); err != nil {
			return ctrl.Result{}, err
		}
	}
	var (
		res ctrl.Result
		err error
	)
	switch s.Status.Phase {
	case "":
		res, err = r.reconcileSuiteNew(ctx, &s)
	case v1alpha1.PhaseRunning:
		res, err = r.reconcileSuiteRunning(ctx, &s)
	case v1alpha1.PhaseSucceeded, v1alpha1.PhaseFailed:
		res, err = r.reconcileSuiteFinished(ctx, &s)
	}
	if apierrors.IsConflict(err) {
		// A stale copy: the next reconcile reads the current one.
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	return res, err
}

// moveSuiteTo moves the suite forward and records the status.
func (r *BenchmarkSuiteReconciler) moveSuiteTo(ctx context.Context, s *v1alpha1.BenchmarkSuite, next v1alpha1.Phase, reason, message string) error {
	if !s.MoveTo(next, message) {
		return nil
	}
	if next.Finished() && s.Status.CompletionTime == nil {
		now := metav1.Now()
		s.Status.CompletionTime = &now
		s.Status.CurrentCell = ""
	}
	eventType := corev1.EventTypeNormal
	if next == v1alpha1.PhaseFailed {
		eventType = corev1.EventTypeWarning
	}
	return r.updateSuiteStatus(ctx, s, eventType, reason)
}

// updateSuiteStatus writes the status (progress recomputed) the way a
// run's is written (writeStatus), and announces a write with an event. A
// suite's step is computed from the whole suite as this reconcile read it,
// not from changes that could be replayed on a newer copy, so a suite that
// changed since is a conflict: Reconcile looks again in a second, from a
// fresh read, and computes the step from that.
func (r *BenchmarkSuiteReconciler) updateSuiteStatus(ctx context.Context, s *v1alpha1.BenchmarkSuite, eventType, reason string) error {
	s.Status.ObservedGeneration = s.Generation
	s.Status.Progress = suite.Progress(s.Status.Cells)
	var current v1alpha1.BenchmarkSuite
	if err := r.apiReader().Get(ctx, client.ObjectKeyFromObject(s), &current); err != nil {
		return err
	}
	if current.ResourceVersion != s.ResourceVersion {
		return apierrors.NewConflict(v1alpha1.GroupVersion.WithResource("benchmarksuites").GroupResource(), s.Name,
			fmt.Errorf("this step was computed from resourceVersion %s, and the suite is at %s now", s.ResourceVersion, current.ResourceVersion))
	}
	written, err := writeStatus(ctx, r.Status(), &current, s, equality.Semantic.DeepEqual(current.Status, s.Status))
	if err != nil || !written {
		return err
	}
	if r.Recorder != nil {
		r.Recorder.Eventf(s, nil, eventType, reason, string(s.Status.Phase), "%s", s.Status.Message)
	}
	return nil
}

// SetupWithManager registers the reconciler. Child runs are owned, so a
// cell that ends moves the suite on at once; the clusters' readiness is
// polled, as a run's is.
func (r *BenchmarkSuiteReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.BenchmarkSuite{}).
		Owns(&v1alpha1.BenchmarkRun{}).
		Named("benchmarksuite").
		Complete(r)
}

// again is the pause before a suite that moved on is looked at again
// (controller-runtime 0.24 deprecates Requeue: true; a status write that
// changed nothing brings no watch event to rely on).
const again = 100 * time.Millisecond

// suitePoll is how often a suite waiting for a cluster is looked at.
const suitePoll = pollInterval
