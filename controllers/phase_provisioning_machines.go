package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/machines"
)

// Which of the run's nodes are one machine (status.testbed.machines,
// internal/machines): recorded with the testbed, before the load, over the
// brokers', bookies' and probed nodes, so the coordinator carries it into
// summary.json beside the per-node figures it qualifies; and again, in
// status, once the workers are placed (phase_running_placement.go), with
// their nodes and the coordinator's. The Nodes are listed from the API
// server, once each time: no cache (and so no watch) of every node.
// +kubebuilder:rbac:groups="",resources=nodes,verbs=list

// machinesOf groups the named nodes by machine; without permission to
// list Nodes the record says it is not known.
func (r *BenchmarkRunReconciler) machinesOf(ctx context.Context, names []string) (*v1alpha1.TestbedMachines, error) {
	if len(names) == 0 {
		return nil, nil
	}
	var nodes corev1.NodeList
	if err := r.apiReader().List(ctx, &nodes); apierrors.IsForbidden(err) {
		return machines.Unknown(names, fmt.Sprintf("the operator may not list nodes (%v): grant it list on nodes (the chart's role does)", err)), nil
	} else if err != nil {
		return nil, fmt.Errorf("listing the nodes to tell which of the run's nodes share a machine: %w", err)
	}
	return machines.Of(names, nodes.Items), nil
}
