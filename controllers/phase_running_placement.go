package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/workers"
)

// recordWorkerPlacement writes where the workers and the coordinator ran
// into status.testbed.workers (workers.PlacementOf) once all of them are
// scheduled, once: their spread is preferred, not insisted on, so whether
// they shared nodes is part of what the run stood on. Workers that share a
// node are announced with a warning unless the placement asked for it.
func (r *BenchmarkRunReconciler) recordWorkerPlacement(ctx context.Context, run *v1alpha1.BenchmarkRun) error {
	if run.Status.Testbed == nil || run.Status.Testbed.Workers != nil {
		return nil
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(run.Namespace), client.MatchingLabels{workers.LabelRun: run.Name}); err != nil {
		return err
	}
	placed, ok := workers.PlacementOf(run, pods.Items)
	if !ok {
		return nil
	}
	written, err := r.patchStatus(ctx, run, func(run *v1alpha1.BenchmarkRun) bool {
		if tb := run.Status.Testbed; tb != nil && tb.Workers == nil {
			tb.Workers = placed
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
