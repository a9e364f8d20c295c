package controllers

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
)

// reconcileNew takes a run that has no phase yet: it translates the declared
// durability into the system's settings, records them (and any downgrade) in
// status, and moves the run to Pending.
func (r *BenchmarkRunReconciler) reconcileNew(ctx context.Context, run *v1alpha1.BenchmarkRun) (ctrl.Result, error) {
	eff, err := durability.TranslateFor(run.Spec.System, brokerVersion(run), run.Spec.DurabilityOrDefault())
	if err != nil {
		// The API server's validation makes this unreachable; a spec that
		// slipped through (an older CRD) fails with the reason.
		run.SetCondition(v1alpha1.ConditionDurabilityResolved, metav1.ConditionFalse, v1alpha1.ReasonInvalid, err.Error())
		return r.fail(ctx, run, v1alpha1.ReasonInvalid, err.Error())
	}

	run.Status.Durability = &eff
	reason, msg := v1alpha1.ReasonTranslated, fmt.Sprintf("durability level %d in effect, %s", eff.AchievedLevel, durability.VerificationLabel(&eff))
	eventType := corev1.EventTypeNormal
	if eff.AchievedLevel != eff.RequestedLevel {
		reason = v1alpha1.ReasonLevelDowngraded
		msg = fmt.Sprintf("durability level %d requested, level %d achieved: %s", eff.RequestedLevel, eff.AchievedLevel, eff.Explanation)
		eventType = corev1.EventTypeWarning
	}
	run.SetCondition(v1alpha1.ConditionDurabilityResolved, metav1.ConditionTrue, reason, msg)
	run.MoveTo(v1alpha1.PhasePending, msg)
	return ctrl.Result{}, r.updateStatus(ctx, run, eventType, reason)
}

// brokerVersion is the broker version a run's durability applies to: the
// managed cluster's, with Strimzi's default for Kafka when none is pinned.
// An unpinned managed Pulsar takes whatever image the configured chart
// names, and an existing cluster is whatever it is, so both are "" (not
// known) here; for an existing cluster the coordinator reads the version
// and the settings from the brokers and replaces status.durability.
func brokerVersion(run *v1alpha1.BenchmarkRun) string {
	m := run.Spec.Cluster.Managed
	switch {
	case m == nil:
		return ""
	case m.Version != "":
		return m.Version
	case run.Spec.System == v1alpha1.SystemKafka:
		return strimzi.DefaultKafkaVersion
	}
	return ""
}

// reconcilePending reads the files the run names in ConfigMaps, deploys the
// brokers (nothing for an existing cluster) and starts the provisioning
// clock. A bad file fails the run before anything is deployed.
func (r *BenchmarkRunReconciler) reconcilePending(ctx context.Context, run *v1alpha1.BenchmarkRun) (ctrl.Result, error) {
	refused, dropped, err := r.readRunFiles(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	if refused != nil {
		return r.fail(ctx, run, refused.reason, refused.message)
	}
	if len(dropped) > 0 && r.Recorder != nil {
		// As run --local prints them: nothing of the file is ignored silently.
		notes := make([]string, len(dropped))
		for i, d := range dropped {
			notes[i] = d.String()
		}
		r.Recorder.Eventf(run, nil, corev1.EventTypeNormal, "DriverFileKeysNotApplied", "Pending",
			"%s: not applied: %s", run.Spec.Driver.ConfigMapRef.Name, strings.Join(notes, "; "))
	}
	// Refused at once rather than after the brokers are up: the privileged
	// page-cache Job is the last step before the load.
	if msg, err := r.checkPodSecurity(ctx, run); err != nil {
		return ctrl.Result{}, err
	} else if msg != "" {
		return r.fail(ctx, run, "PodSecurity", msg)
	}
	if err := r.brokersFor(run).Deploy(ctx, run); err != nil {
		return ctrl.Result{}, err
	}
	now := metav1.Now()
	run.Status.StartTime = &now
	run.SetCondition(v1alpha1.ConditionBrokersReady, metav1.ConditionFalse, "Provisioning", "waiting for the brokers")
	return ctrl.Result{RequeueAfter: pollInterval},
		r.moveTo(ctx, run, v1alpha1.PhaseProvisioning, "Provisioning", provisioningMessage(run))
}

func provisioningMessage(run *v1alpha1.BenchmarkRun) string {
	switch {
	case run.Spec.Cluster.Existing != nil:
		return "checking the existing cluster"
	case run.Spec.System == v1alpha1.SystemPulsar:
		return "deploying Pulsar with the Helm chart"
	default:
		return "deploying Kafka with Strimzi"
	}
}
