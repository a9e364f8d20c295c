package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/provision/workers"
	"github.com/streambench/streambench-operator/internal/results"
)

// resultsGrace is how long a finished coordinator's results ConfigMap may
// take to appear in the controller's cache.
const resultsGrace = time.Minute

// reconcileCollecting copies the summary of the coordinator's results
// ConfigMap into status.results.
func (r *BenchmarkRunReconciler) reconcileCollecting(ctx context.Context, run *v1alpha1.BenchmarkRun) (ctrl.Result, error) {
	name := workers.ResultsName(run)
	var cm corev1.ConfigMap
	err := r.Get(ctx, types.NamespacedName{Namespace: run.Namespace, Name: name}, &cm)
	// With spec.testbed.dropPageCache the coordinator creates the ConfigMap
	// mid-run for its page-cache requests (internal/pagecache); a cache
	// that still holds that version has no results yet: wait as for none.
	_, hasSummary := cm.Data[results.KeySummary]
	if apierrors.IsNotFound(err) || (err == nil && !hasSummary) {
		since := time.Now()
		if c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionWorkersCompleted); c != nil {
			since = c.LastTransitionTime.Time
		}
		if time.Since(since) > resultsGrace {
			return r.fail(ctx, run, "NoResults", fmt.Sprintf("the coordinator finished but wrote no results into ConfigMap %s; see its logs (kubectl logs job/%s)", name, workers.CoordinatorName(run)))
		}
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	summary, err := results.Read(&cm)
	if err != nil {
		return r.fail(ctx, run, "ResultsUnreadable", fmt.Sprintf("results ConfigMap %s: %v", name, err))
	}
	run.Status.Results = &summary.Results
	run.Status.ResultsRef = name
	if d := summary.Durability; run.Spec.Cluster.Existing != nil && d != nil && d.Explanation != "" {
		// The coordinator read the existing brokers (the controller may
		// not reach them): what they really give replaces the translation
		// recorded at creation, which only said what was asked.
		run.Status.Durability = d
		reason, msg := v1alpha1.ReasonTranslated, fmt.Sprintf("durability read from the existing cluster: level %d in effect, %s", d.AchievedLevel, durability.VerificationLabel(d))
		if d.AchievedLevel != d.RequestedLevel {
			msg = fmt.Sprintf("durability read from the existing cluster: level %d requested, level %d in effect: %s", d.RequestedLevel, d.AchievedLevel, d.Explanation)
		}
		// A larger number is a weaker level; a stronger one than asked is
		// reported too, but is no downgrade.
		if d.AchievedLevel > d.RequestedLevel {
			reason = v1alpha1.ReasonLevelDowngraded
		}
		run.SetCondition(v1alpha1.ConditionDurabilityResolved, metav1.ConditionTrue, reason, msg)
	}
	run.SetCondition(v1alpha1.ConditionResultsRecorded, metav1.ConditionTrue, "Recorded", "results in status.results and ConfigMap "+name)
	return ctrl.Result{Requeue: true}, r.moveTo(ctx, run, v1alpha1.PhaseSucceeded, "Succeeded",
		fmt.Sprintf("published %.1f MB/s, publish p99 %.2f ms", summary.Results.PublishMBPerSec, summary.Results.PublishLatencyMs.P99))
}
