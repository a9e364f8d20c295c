package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/workers"
)

// The nodes are listed once per run, from the API server (no cache, so no
// watch of every node): list is the one verb needed.
// +kubebuilder:rbac:groups="",resources=nodes,verbs=list

// workerNodes is what the Pending check found about the nodes the
// workers may go to.
type workerNodes struct {
	status  metav1.ConditionStatus
	reason  string
	message string
}

func (w workerNodes) refused() bool { return w.status == metav1.ConditionFalse }

func (w workerNodes) condition() statusTx {
	return setCondition(v1alpha1.ConditionWorkersSchedulable, w.status, w.reason, w.message)
}

// checkWorkerNodes looks, before anything is deployed, for a node that
// could take a worker under spec.workers.placement (workers.CheckNodes):
// with none, a run used to deploy its brokers, create its workers and only
// then fail as Unschedulable, minutes later, and tear the brokers down
// again. Managed and existing clusters alike: both run workers. Resources
// are left to the scheduler (and the Running phase's Unschedulable check).
func (r *BenchmarkRunReconciler) checkWorkerNodes(ctx context.Context, run *v1alpha1.BenchmarkRun) (workerNodes, error) {
	if r.SkipWorkerNodeCheck {
		return workerNodes{metav1.ConditionUnknown, "NotChecked",
			"the operator runs with --worker-node-check=false (client nodes made on demand): the workers' placement is the scheduler's to decide"}, nil
	}
	var nodes corev1.NodeList
	if err := r.apiReader().List(ctx, &nodes); apierrors.IsForbidden(err) {
		// An operator whose role predates the check runs as before.
		return workerNodes{metav1.ConditionUnknown, "NodesNotReadable",
			fmt.Sprintf("the operator may not list nodes (%v): grant it list on nodes (the chart's role does)", err)}, nil
	} else if err != nil {
		return workerNodes{}, fmt.Errorf("listing the nodes to check spec.workers.placement: %w", err)
	}
	fit := workers.CheckNodes(run.Spec.Workers.Placement, nodes.Items)
	if len(fit.Fit) == 0 {
		return workerNodes{metav1.ConditionFalse, v1alpha1.ReasonNoWorkerNode, fit.Message}, nil
	}
	return workerNodes{metav1.ConditionTrue, "NodesFit", fit.Message}, nil
}
