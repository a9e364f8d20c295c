// Package controllers holds the BenchmarkRun reconciler. Reconcile fetches the
// run, handles deletion, and hands the run to the step of its phase; each
// phase lives in its own file (phase_<name>.go), so the folder reads as the
// life of a run. All state is in the run's status, so a restarted operator
// continues a run where it was.
package controllers

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/monitoring"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
	"github.com/streambench/streambench-operator/internal/provision/workers"
	"github.com/streambench/streambench-operator/internal/results"
)

// Finalizer lets the controller remove what a run deployed before the run
// goes away.
const Finalizer = "streambench.io/teardown"

// pollInterval is how often a waiting run is looked at again when no watch
// event arrives (readiness of objects the controller does not watch).
const pollInterval = 5 * time.Second

// BenchmarkRunReconciler reconciles BenchmarkRun objects.
type BenchmarkRunReconciler struct {
	client.Client
	Scheme   *runtime.Scheme
	Recorder events.EventRecorder
	// WorkerImage is the streambench image the worker and coordinator Jobs
	// use unless a run overrides it.
	WorkerImage string
	// AllowedWorkerImages are the other images a run may name in
	// spec.workers.image (workers.ImagePolicy: exact references, or
	// prefixes ending in '*'); empty, WorkerImage alone.
	AllowedWorkerImages []string
	// Helm installs managed Pulsar clusters; nil leaves managed Pulsar runs
	// to fail with a message that says so.
	Helm *pulsar.Installer
	// UnschedulableGrace is how long a worker or coordinator pod may stay
	// unschedulable before the run fails (a cluster autoscaler may still
	// be adding a node).
	UnschedulableGrace time.Duration
	// SkipWorkerNodeCheck leaves out the Pending check that some node can
	// take a worker (phase_pending_placement.go): for clusters whose client
	// nodes are made on demand (a node pool that scales from zero).
	SkipWorkerNodeCheck bool
	// APIReader reads the ConfigMaps a run names (its driver and payload
	// files) from the API server, not the cache: a ConfigMap created a
	// moment before the run may not be cached yet, and a miss fails the run
	// for good. Nil means Client.
	APIReader client.Reader
	// Monitoring labels the run's PodMonitors for kube-prometheus-stack
	// (phase_monitoring.go).
	Monitoring monitoring.Config
	// OperatorNamespace is the namespace the operator runs in. What a
	// tenant must not reach lives there, never in a run's namespace:
	// Helm's release records and the privileged signal and page-cache
	// Jobs (docs/security.md).
	OperatorNamespace string
	// DefaultArchive is where runs without spec.results.archive archive
	// their results (the chart's archive values), its credentials Secret
	// in OperatorNamespace; nil: such runs are not archived.
	DefaultArchive *v1alpha1.ArchiveSpec
	// ArchiveRetry is the wait before the first retry of a failed upload
	// to the default archive (doubled for each next one) and between
	// looks at an archiver Job; 0: 5 s.
	ArchiveRetry time.Duration
}

// +kubebuilder:rbac:groups=streambench.io,resources=benchmarkruns,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=streambench.io,resources=benchmarkruns/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=streambench.io,resources=benchmarkruns/finalizers,verbs=update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;delete

// Reconcile moves one run one step forward.
func (r *BenchmarkRunReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var run v1alpha1.BenchmarkRun
	if err := r.Get(ctx, req.NamespacedName, &run); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !run.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, &run)
	}
	if !controllerutil.ContainsFinalizer(&run, Finalizer) {
		// A patch, not an update: an update sends the whole spec back, and
		// a value that round-trips differently through Go (a duration
		// "20m" comes back "20m0s") would trip the immutability rule.
		orig := run.DeepCopy()
		controllerutil.AddFinalizer(&run, Finalizer)
		if err := r.Patch(ctx, &run, client.MergeFrom(orig)); err != nil {
			return ctrl.Result{}, err
		}
	}

	var (
		res ctrl.Result
		err error
	)
	switch run.Status.Phase {
	case "":
		res, err = r.reconcileNew(ctx, &run)
	case v1alpha1.PhasePending, v1alpha1.PhaseQueued:
		// A queued run does what Pending does again (phase_queued.go).
		res, err = r.reconcilePending(ctx, &run)
	case v1alpha1.PhaseProvisioning:
		res, err = r.reconcileProvisioning(ctx, &run)
	case v1alpha1.PhaseRunning:
		res, err = r.reconcileRunning(ctx, &run)
	case v1alpha1.PhaseCollecting:
		res, err = r.reconcileCollecting(ctx, &run)
	case v1alpha1.PhaseSucceeded, v1alpha1.PhaseFailed:
		res, err = r.reconcileFinished(ctx, &run)
	}
	if err != nil && isPermanent(err) {
		return r.fail(ctx, &run, "Failed", err.Error())
	}
	if apierrors.IsConflict(err) {
		// A stale copy of an object other than the run's status (which
		// patchStatus retries itself): the next reconcile reads it again.
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	return res, err
}

// fail ends the run in Failed with the reason, keeping whatever results it
// already had (and those the coordinator wrote so far, marked partial).
func (r *BenchmarkRunReconciler) fail(ctx context.Context, run *v1alpha1.BenchmarkRun, reason, message string, txs ...statusTx) (ctrl.Result, error) {
	txs = append(txs, r.partialResults(ctx, run), setCondition(v1alpha1.ConditionFailed, metav1.ConditionTrue, reason, message))
	if run.Status.Phase == v1alpha1.PhaseRunning {
		// The faults still to come will not: each says so.
		txs = append(txs, closeFaults(run, int(run.Spec.Repeats), "not injected: the run failed before its time came ("+reason+")"))
	}
	return ctrl.Result{}, r.moveTo(ctx, run, v1alpha1.PhaseFailed, reason, message, txs...)
}

// SetupWithManager registers the reconciler with the manager. Jobs are
// watched so a finished coordinator moves its run on at once, and so are
// the privileged Jobs in the operator's namespace, mapped to their run by
// label as no owner reference crosses namespaces (privileged_jobs.go); the load
// pods so a deleted one fails its run at once, by name; results
// ConfigMaps so a coordinator's page-cache drop request (and its results)
// are seen at once. The coordinator, not the controller, creates that
// ConfigMap and does not make the run its controller, hence a mapping by
// name and label rather than Owns; ConfigMaps are in the manager's cache
// anyway (phase_collecting.go reads them through it). A run that finishes
// or is deleted wakes the runs queued for its nodes (phase_queued.go).
func (r *BenchmarkRunReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.BenchmarkRun{}).
		Owns(&batchv1.Job{}).
		Watches(&batchv1.Job{}, handler.EnqueueRequestsFromMapFunc(r.privilegedJobRun)).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(resultsConfigMapRun)).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(loadPodRun)).
		Watches(&v1alpha1.BenchmarkRun{}, handler.EnqueueRequestsFromMapFunc(r.wakeQueued)).
		Named("benchmarkrun").
		Complete(r)
}

// loadPodRun maps a worker or coordinator pod to its run: a pod that is
// deleted or evicted mid-run must fail the run while the pod, terminating,
// can still be named (a worker exits within a second of SIGTERM, sooner
// than a poll would see it).
func loadPodRun(_ context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	if role := l[workers.LabelRole]; l[workers.LabelRun] == "" || (role != workers.RoleWorker && role != workers.RoleCoord) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: l[workers.LabelRun]}}}
}

// resultsConfigMapRun maps a run's results ConfigMap to the run.
func resultsConfigMapRun(_ context.Context, obj client.Object) []reconcile.Request {
	run := obj.GetLabels()[results.LabelRun]
	if run == "" || obj.GetName() != results.ConfigMapName(run) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: run}}}
}
