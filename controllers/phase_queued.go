package controllers

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/runqueue"
)

// queuePoll is how often a queued run looks again without a watch event:
// the run it waits for wakes it when it finishes (wakeQueued), but freed
// disks (hack/free-local-disks.sh) send it nothing.
const queuePoll = 30 * time.Second

// Nodes and volumes are listed cluster-wide from the API server, never
// cached or watched: list is the one verb needed (BenchmarkRuns and
// StorageClasses are listed already, benchmarkrun_controller.go and
// phase_provisioning_testbed.go).
// +kubebuilder:rbac:groups="",resources=nodes;persistentvolumes,verbs=list

// waitInQueue is the Queued step, the last one of Pending before the
// brokers are deployed: a managed run whose broker placement can share a
// node with another managed run's (internal/runqueue) waits in phase Queued
// until every such run that holds the nodes has finished and been torn
// down and every such run created earlier has gone first; then, where its
// static volumes are all taken, until they are freed. Condition Queued
// and status.message name the run (or the volumes) it waits for. It
// reports true while the run waits.
//
// A run leaves the queue once (condition Queued False, reason Admitted),
// and from then on holds the nodes for the runs after it; it is not looked
// at again, so two runs that passed cannot send each other back.
func (r *BenchmarkRunReconciler) waitInQueue(ctx context.Context, run *v1alpha1.BenchmarkRun) (ctrl.Result, bool, error) {
	if run.Spec.Cluster.Managed == nil || runqueue.Admitted(run) {
		return ctrl.Result{}, false, nil
	}
	runs, err := r.listAllRuns(ctx)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	nodes, err := r.queueNodes(ctx)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	wait := runqueue.Ahead(run, runs, nodes)
	reason, msg := v1alpha1.ReasonWaitingForRun, wait.Message()
	if !wait.Waiting() {
		disks, err := r.queueDisks(ctx, run, runs)
		if err != nil {
			return ctrl.Result{}, false, err
		}
		if !disks.Waiting() {
			// With the driver settings and price model Pending read into run.Status this
			// reconcile: patchStatus replaces run.Status with what it
			// wrote, and the move to Provisioning writes them from there.
			written, err := r.patchStatus(ctx, run, filesTx(run.Status.Driver, run.Status.PriceModel),
				setCondition(v1alpha1.ConditionQueued, metav1.ConditionFalse, v1alpha1.ReasonAdmitted, msg))
			if written && run.Status.Phase == v1alpha1.PhaseQueued && r.Recorder != nil {
				r.Recorder.Eventf(run, nil, corev1.EventTypeNormal, v1alpha1.ReasonAdmitted, string(run.Status.Phase), "%s", msg)
			}
			return ctrl.Result{}, false, err
		}
		reason, msg = v1alpha1.ReasonWaitingForDisks, disks.Message()
	}
	queued := setCondition(v1alpha1.ConditionQueued, metav1.ConditionTrue, reason, msg)
	if run.Status.Phase != v1alpha1.PhaseQueued {
		return ctrl.Result{RequeueAfter: queuePoll}, true, r.moveTo(ctx, run, v1alpha1.PhaseQueued, reason, msg, queued)
	}
	// Said again only when it changed: the run ahead finished and the
	// next one is named, or the disks are now what it waits for.
	written, err := r.patchStatus(ctx, run, queued, setMessage(msg))
	if written {
		r.announce(run, corev1.EventTypeNormal, reason)
	}
	return ctrl.Result{RequeueAfter: queuePoll}, true, err
}

// listAllRuns lists the BenchmarkRuns of every namespace from the API
// server, not the cache: a run admitted a moment ago must be seen as
// holding the nodes by the next run looked at, or both would deploy. The
// controller handles one run at a time, so that read is consistent with
// every admission before it. Where the operator may not list runs
// cluster-wide (the chart's watchNamespaces mode), the cache of its
// namespaces is read instead, and runs in other namespaces are not seen.
func (r *BenchmarkRunReconciler) listAllRuns(ctx context.Context) ([]v1alpha1.BenchmarkRun, error) {
	var list v1alpha1.BenchmarkRunList
	err := r.apiReader().List(ctx, &list)
	if apierrors.IsForbidden(err) {
		err = r.List(ctx, &list)
	}
	return list.Items, err
}

// queueNodes reads every Node for the exact overlap test; without
// permission the queue compares node selectors (runqueue.Overlap).
func (r *BenchmarkRunReconciler) queueNodes(ctx context.Context) (runqueue.Nodes, error) {
	var list corev1.NodeList
	if err := r.apiReader().List(ctx, &list); err != nil {
		if apierrors.IsForbidden(err) {
			return runqueue.Nodes{}, nil
		}
		return runqueue.Nodes{}, err
	}
	return runqueue.Nodes{Known: true, Items: list.Items}, nil
}

// queueDisks says whether the run's static volumes are all taken
// (runqueue.Disks). Without permission to read volumes or classes it
// says nothing: the provisioning deadline is then what tells.
func (r *BenchmarkRunReconciler) queueDisks(ctx context.Context, run *v1alpha1.BenchmarkRun, runs []v1alpha1.BenchmarkRun) (runqueue.DiskWait, error) {
	var classes storagev1.StorageClassList
	var pvs corev1.PersistentVolumeList
	for _, list := range []client.ObjectList{&classes, &pvs} {
		if err := r.apiReader().List(ctx, list); err != nil {
			if apierrors.IsForbidden(err) {
				return nil, nil
			}
			return nil, err
		}
	}
	return runqueue.Disks(run, classes.Items, pvs.Items, runs), nil
}

// wakeQueued maps a managed run that finished or is being deleted (and
// with it the end of its teardown, TornDown) to every Queued run, which
// may now go: the run they wait for frees the nodes.
func (r *BenchmarkRunReconciler) wakeQueued(ctx context.Context, obj client.Object) []reconcile.Request {
	run, ok := obj.(*v1alpha1.BenchmarkRun)
	if !ok || run.Spec.Cluster.Managed == nil || (!run.Status.Phase.Finished() && run.DeletionTimestamp.IsZero()) {
		return nil
	}
	var list v1alpha1.BenchmarkRunList
	if err := r.List(ctx, &list); err != nil {
		return nil // the queued runs look again within queuePoll
	}
	var out []reconcile.Request
	for _, o := range list.Items {
		if o.Status.Phase == v1alpha1.PhaseQueued {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&o)})
		}
	}
	return out
}
