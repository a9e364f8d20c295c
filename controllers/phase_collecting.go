package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/outcome"
	"github.com/streambench/streambench-operator/internal/provision/workers"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/thresholds"
)

// resultsGrace is how long a finished coordinator's results ConfigMap may
// take to appear in the controller's cache.
const resultsGrace = time.Minute

// reconcileCollecting copies the summary of the coordinator's results
// ConfigMap into status.results.
func (r *BenchmarkRunReconciler) reconcileCollecting(ctx context.Context, run *v1alpha1.BenchmarkRun) (ctrl.Result, error) {
	name := workers.ResultsName(run)
	cm, foreign, err := runResults(ctx, r.Client, run)
	// With spec.testbed.dropPageCache the coordinator creates the ConfigMap
	// mid-run for its page-cache requests (internal/pagecache); a cache
	// that still holds that version has no results yet: wait as for none.
	hasSummary := false
	if cm != nil {
		_, hasSummary = cm.Data[results.KeySummary]
	}
	if apierrors.IsNotFound(err) || (err == nil && !hasSummary) {
		if time.Since(enteredAt(run, v1alpha1.PhaseCollecting)) > resultsGrace {
			msg := fmt.Sprintf("the coordinator finished but wrote no results into ConfigMap %s; see its logs (kubectl logs job/%s)", name, workers.CoordinatorName(run))
			if foreign != "" {
				msg = fmt.Sprintf("the coordinator finished, but %s", foreign)
			}
			return r.fail(ctx, run, "NoResults", msg)
		}
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	// What finishes the run (internal/outcome), read once.
	in, err := outcome.FromConfigMap(cm, run.Spec.RepeatCount() > 1, run.Status.Faults, run.Spec.Thresholds)
	if err != nil {
		return r.fail(ctx, run, "ResultsUnreadable", fmt.Sprintf("results ConfigMap %s: %v", name, err))
	}
	in.Prices = run.Status.PriceModel
	if in.Written().Results.Partial {
		// The coordinator's last periodic write; its final one (it
		// finished) has not reached the cache yet.
		if time.Since(enteredAt(run, v1alpha1.PhaseCollecting)) > resultsGrace {
			return r.fail(ctx, run, "NoResults", fmt.Sprintf("the coordinator finished but its final results never replaced the partial ones in ConfigMap %s; see its logs (kubectl logs job/%s)", name, workers.CoordinatorName(run)))
		}
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	// The run finished as local mode finishes one (internal/outcome):
	// each fault's impact, the thresholds' verdict, and the ConfigMap's
	// summaries with their faults and cost, so that its summary.json is a
	// local run's.
	out, written, err := outcome.Collect(cm, in)
	if out == nil {
		return r.fail(ctx, run, "ResultsUnreadable", fmt.Sprintf("results ConfigMap %s: %v", name, err))
	}
	if err != nil {
		log.FromContext(ctx).Info("the faults and cost stay in status only", "configMap", name, "error", err.Error())
		if r.Recorder != nil {
			r.Recorder.Eventf(run, nil, corev1.EventTypeWarning, "FaultsNotInResults", string(run.Status.Phase), "status.faults and status.results.cost hold the faults and the cost, ConfigMap %s's summaries do not: %v", name, err)
		}
	}
	if written != nil {
		if err := r.Update(ctx, written); err != nil {
			return ctrl.Result{}, fmt.Errorf("writing the faults and cost into results ConfigMap %s: %w", name, err)
		}
	}
	txs := recordResults(run, out.Summary, name)
	if len(out.Faults) > 0 {
		txs = append(txs, faultImpacts(out.Faults))
	}
	message := out.Message()
	gate := out.Thresholds
	if gate != nil {
		txs = append(txs, thresholdsTx(*gate))
	}
	if err := r.moveTo(ctx, run, v1alpha1.PhaseSucceeded, "Succeeded", message, txs...); err != nil {
		return ctrl.Result{}, err
	}
	// The run succeeded (it measured what it was asked); a failed bound is
	// the results' verdict, told apart as a warning of its own.
	if gate != nil && !gate.Met() && r.Recorder != nil {
		r.Recorder.Eventf(run, nil, corev1.EventTypeWarning, "ThresholdsFailed", string(run.Status.Phase), "%s", gate.Message())
	}
	return ctrl.Result{}, nil
}

// faultImpacts sets each status.faults entry's impact to the outcome's.
func faultImpacts(done []v1alpha1.FaultStatus) statusTx {
	return func(run *v1alpha1.BenchmarkRun) bool {
		for _, f := range done {
			if e := statusFault(run, f.Index, f.Repeat); e != nil {
				e.Impact = f.Impact
			}
		}
		return true
	}
}

// thresholdsTx records spec.thresholds checked on the final results:
// condition ThresholdsMet, True or False with each failed threshold named.
func thresholdsTx(o thresholds.Outcome) statusTx {
	status, reason := metav1.ConditionTrue, "Met"
	if !o.Met() {
		status, reason = metav1.ConditionFalse, "Failed"
	}
	return setCondition(v1alpha1.ConditionThresholdsMet, status, reason, o.Message())
}

// recordResults copies a results summary into the status: status.results
// (partial or not), and what the coordinator read of an existing cluster.
func recordResults(run *v1alpha1.BenchmarkRun, summary *results.Summary, name string) []statusTx {
	res := summary.Results
	repeats, intervals := repeatsOf(summary)
	txs := []statusTx{func(run *v1alpha1.BenchmarkRun) bool {
		run.Status.Results = &res
		run.Status.ResultsRef = name
		run.Status.Repeats, run.Status.Intervals = repeats, intervals
		return true
	}}
	if d := summary.Durability; run.Spec.Cluster.Existing != nil && d != nil && d.Explanation != "" {
		// The coordinator read the existing brokers (the controller may
		// not reach them): what they really give replaces the translation
		// recorded at creation, which only said what was asked.
		reason, msg := v1alpha1.ReasonTranslated, fmt.Sprintf("durability read from the existing cluster: level %d in effect, %s", d.AchievedLevel, durability.VerificationLabel(d))
		if d.AchievedLevel != d.RequestedLevel {
			msg = fmt.Sprintf("durability read from the existing cluster: level %d requested, level %d in effect: %s", d.RequestedLevel, d.AchievedLevel, d.Explanation)
		}
		// A larger number is a weaker level; a stronger one than asked is
		// reported too, but is no downgrade.
		if d.AchievedLevel > d.RequestedLevel {
			reason = v1alpha1.ReasonLevelDowngraded
		}
		txs = append(txs, func(run *v1alpha1.BenchmarkRun) bool { run.Status.Durability = d; return true },
			setCondition(v1alpha1.ConditionDurabilityResolved, metav1.ConditionTrue, reason, msg))
	}
	what := "results"
	if res.Partial {
		what = "partial results (the run did not finish)"
	}
	return append(txs, setCondition(v1alpha1.ConditionResultsRecorded, metav1.ConditionTrue, "Recorded", what+" in status.results and ConfigMap "+name))
}

// repeatsOf are a repeated run's repeats and intervals as status keeps
// them (nil for a run not repeated): each figure by its status.results
// path, as spec.thresholds names it.
func repeatsOf(summary *results.Summary) ([]v1alpha1.RepeatResults, []v1alpha1.FigureInterval) {
	var reps []v1alpha1.RepeatResults
	for _, r := range summary.Repeats {
		reps = append(reps, v1alpha1.RepeatResults{Index: int32(r.Index), Start: metav1.NewTime(r.Start), End: metav1.NewTime(r.End), Results: r.Results})
	}
	var ivs []v1alpha1.FigureInterval
	for _, f := range results.Figures {
		if e, ok := summary.Interval(f); ok {
			ivs = append(ivs, v1alpha1.FigureInterval{Figure: string(f.Key), N: int32(e.N), Median: e.Median, Low: e.Low, High: e.High, Confidence: e.Confidence})
		}
	}
	return reps, ivs
}

// partialResults keeps, for a run that fails, what its coordinator wrote
// so far (it writes its results every interval): a status tx that records
// them unless the run has results already. A run that never got as far as
// the load, or a ConfigMap that cannot be read, keeps nothing more.
func (r *BenchmarkRunReconciler) partialResults(ctx context.Context, run *v1alpha1.BenchmarkRun) statusTx {
	none := func(*v1alpha1.BenchmarkRun) bool { return true }
	if run.Status.Results != nil || (run.Status.Phase != v1alpha1.PhaseRunning && run.Status.Phase != v1alpha1.PhaseCollecting) {
		return none
	}
	name := workers.ResultsName(run)
	// From the API server: the coordinator's last write may be a moment
	// old, and the cache behind it.
	cm, foreign, err := runResults(ctx, r.apiReader(), run)
	if err != nil || foreign != "" {
		return none
	}
	if _, ok := cm.Data[results.KeySummary]; !ok {
		return none
	}
	summary, err := results.Read(cm)
	if err != nil {
		return none
	}
	// The coordinator wrote these before it ended, or while it still ran:
	// either way the run did not finish.
	summary.Results.Partial = true
	txs := recordResults(run, summary, name)
	return func(run *v1alpha1.BenchmarkRun) bool {
		if run.Status.Results != nil {
			return true
		}
		for _, tx := range txs {
			tx(run)
		}
		return true
	}
}
