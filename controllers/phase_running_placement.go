package controllers

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/machines"
	"github.com/streambench/streambench-operator/internal/provision/workers"
)

// recordWorkerPlacement writes where the workers and the coordinator ran
// into status.testbed.workers (workers.PlacementOf), and which of the
// run's nodes, theirs included, share a machine into
// status.testbed.machines, once all of them are scheduled, once: their
// spread is preferred, not insisted on, so whether they shared nodes is
// part of what the run stood on. Workers that share a node are announced
// with a warning unless the placement asked for it. The pods are those
// of jobs (the coordinator's and the workers' Jobs), by controller: a
// look-alike with their labels must not say where the workload ran.
func (r *BenchmarkRunReconciler) recordWorkerPlacement(ctx context.Context, run *v1alpha1.BenchmarkRun, jobs ...*batchv1.Job) error {
	if run.Status.Testbed == nil || run.Status.Testbed.Workers != nil {
		return nil
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(run.Namespace), client.MatchingLabels{workers.LabelRun: run.Name}); err != nil {
		return err
	}
	owners := make([]metav1.Object, len(jobs))
	for i, j := range jobs {
		owners[i] = j
	}
	placed, ok := workers.PlacementOf(run, controlledPods(pods.Items, owners...))
	if !ok {
		return nil
	}
	// The machines again, now with the workers' and the coordinator's
	// nodes (phase_provisioning_machines.go); the brokers' are read again
	// from their pods, which the record before the load kept only when
	// probed.
	brokers, _, err := r.brokerNodes(ctx, run)
	if err != nil {
		return err
	}
	withWorkers := *run.Status.Testbed
	withWorkers.Workers = placed
	onMachines, err := r.machinesOf(ctx, machines.NodesOf(&withWorkers, nodeNames(brokers)...))
	if err != nil {
		return err
	}
	written, err := r.patchStatus(ctx, run, func(run *v1alpha1.BenchmarkRun) bool {
		if tb := run.Status.Testbed; tb != nil && tb.Workers == nil {
			tb.Workers = placed
			if onMachines != nil {
				tb.Machines = onMachines
			}
			return true
		}
		return false
	})
	if err != nil || !written || r.Recorder == nil {
		return err
	}
	eventType, reason := corev1.EventTypeNormal, "WorkersPlaced"
	if placed.CoLocated {
		eventType, reason = corev1.EventTypeWarning, "WorkersCoLocated"
		if workers.OwnPodAffinity(run) {
			eventType = corev1.EventTypeNormal
		}
	}
	r.Recorder.Eventf(run, nil, eventType, reason, string(run.Status.Phase), "%s", placed.Note)
	return nil
}
