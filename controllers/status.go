package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// statusTx is one change to a run's status. It is applied to the run as
// the API server has it now, so it must say what to set, not what to add
// to the copy a reconcile started from. A tx that returns false aborts the
// whole patch (a phase move that is no longer forward).
type statusTx func(run *v1alpha1.BenchmarkRun) bool

// patchStatus is the one way the status is written: it reads the run from
// the API server, applies txs in order, and patches the status with the
// resourceVersion it read (optimistic locking), retrying from a fresh read
// on a conflict. run's status becomes what was written. status.display is
// derived from the figures beside it on every write, so kubectl get's
// rounded columns never lag behind status.results or status.testbed.
// It reports whether anything was written.
func (r *BenchmarkRunReconciler) patchStatus(ctx context.Context, run *v1alpha1.BenchmarkRun, txs ...statusTx) (bool, error) {
	reader := r.apiReader()
	written := false
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		written = false
		var current v1alpha1.BenchmarkRun
		if err := reader.Get(ctx, client.ObjectKeyFromObject(run), &current); err != nil {
			return err
		}
		next := current.DeepCopy()
		for _, tx := range txs {
			if !tx(next) {
				run.Status = current.Status
				return nil
			}
		}
		next.Status.ObservedGeneration = next.Generation
		next.Status.RefreshDisplay()
		var err error
		written, err = writeStatus(ctx, r.Status(), &current, next, equality.Semantic.DeepEqual(current.Status, next.Status))
		if err != nil {
			return err
		}
		run.Status = next.Status
		run.ResourceVersion = next.ResourceVersion
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("patching the status of BenchmarkRun %s/%s: %w", run.Namespace, run.Name, err)
	}
	return written, nil
}

// writeStatus is the one status discipline both controllers follow: next's
// status goes as a merge patch against current, the object as the API
// server had it when next was computed, and the patch carries current's
// resourceVersion (optimistic locking). A status computed from a stale copy
// therefore fails with a conflict instead of undoing a newer write, and the
// caller computes it again from a fresh read. Nothing is sent when the
// status did not change (unchanged), so an unchanged step neither bumps the
// resourceVersion nor earns an event. It reports whether it wrote.
func writeStatus(ctx context.Context, w client.SubResourceWriter, current, next client.Object, unchanged bool) (bool, error) {
	if unchanged {
		next.SetResourceVersion(current.GetResourceVersion())
		return false, nil
	}
	if err := w.Patch(ctx, next, client.MergeFromWithOptions(current, client.MergeFromWithOptimisticLock{})); err != nil {
		return false, err
	}
	return true, nil
}

// apiReader reads from the API server itself, not the cache.
func (r *BenchmarkRunReconciler) apiReader() client.Reader {
	if r.APIReader != nil {
		return r.APIReader
	}
	return r.Client
}

// Status changes, composed by the phases.

func setCondition(condType string, status metav1.ConditionStatus, reason, message string) statusTx {
	return func(run *v1alpha1.BenchmarkRun) bool {
		run.SetCondition(condType, status, reason, message)
		return true
	}
}

func setMessage(message string) statusTx {
	return func(run *v1alpha1.BenchmarkRun) bool {
		run.Status.Message = message
		return true
	}
}

// enterPhase moves the run forward and records when; a move that is not
// forward any more (another reconcile got there first) aborts the patch.
func enterPhase(next v1alpha1.Phase, message string) statusTx {
	return func(run *v1alpha1.BenchmarkRun) bool {
		return run.MoveTo(next, message)
	}
}

// moveTo moves the run forward with the other changes txs, records the
// status and announces the change.
func (r *BenchmarkRunReconciler) moveTo(ctx context.Context, run *v1alpha1.BenchmarkRun, next v1alpha1.Phase, reason, message string, txs ...statusTx) error {
	written, err := r.patchStatus(ctx, run, append(txs, enterPhase(next, message))...)
	if err != nil || !written {
		return err
	}
	eventType := corev1.EventTypeNormal
	if next == v1alpha1.PhaseFailed {
		eventType = corev1.EventTypeWarning
	}
	r.announce(run, eventType, reason)
	return nil
}

// announce records an event with the run's phase and message.
func (r *BenchmarkRunReconciler) announce(run *v1alpha1.BenchmarkRun, eventType, reason string) {
	if r.Recorder != nil {
		r.Recorder.Eventf(run, nil, eventType, reason, string(run.Status.Phase), "%s", run.Status.Message)
	}
}
