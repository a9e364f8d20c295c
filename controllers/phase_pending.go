package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/faults"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
	"github.com/streambench/streambench-operator/internal/provision/workers"
	"github.com/streambench/streambench-operator/internal/workload"
)

// reconcileNew takes a run that has no phase yet: it decides the broker
// version (for managed Kafka from the installed Strimzi,
// brokers_strimzi_version.go), translates the declared durability into the
// system's settings for it, records them (and any downgrade) in status, and
// moves the run to Pending. A pinned Kafka version Strimzi does not deploy
// fails the run here, before anything is deployed.
func (r *BenchmarkRunReconciler) reconcileNew(ctx context.Context, run *v1alpha1.BenchmarkRun) (ctrl.Result, error) {
	// What the CRD cannot check of spec.faults (the measured phase, the
	// topology), before anything is looked up or deployed.
	if errs := faults.Validate(&run.Spec, field.NewPath("spec")); len(errs) > 0 {
		return r.fail(ctx, run, v1alpha1.ReasonInvalid, joinErrors(errs))
	}
	// Nothing outside the run's namespace without its owner's consent,
	// before anything of it is read.
	if refused, err := r.consentRefusal(ctx, run); err != nil || refused != "" {
		if err != nil {
			return ctrl.Result{}, err
		}
		return r.fail(ctx, run, v1alpha1.ReasonNotPermitted, refused)
	}
	version, err := r.brokerVersion(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	if version.refused() {
		return r.fail(ctx, run, version.reason, version.message, version.condition())
	}
	eff, err := durability.TranslateFor(run.Spec.System, version.version, run.Spec.DurabilityOrDefault())
	if err != nil {
		// The API server's validation makes this unreachable; a spec that
		// slipped through (an older CRD) fails with the reason.
		return r.fail(ctx, run, v1alpha1.ReasonInvalid, err.Error(),
			setCondition(v1alpha1.ConditionDurabilityResolved, metav1.ConditionFalse, v1alpha1.ReasonInvalid, err.Error()))
	}

	reason, msg := v1alpha1.ReasonTranslated, fmt.Sprintf("durability level %d in effect, %s", eff.AchievedLevel, durability.VerificationLabel(&eff))
	eventType := corev1.EventTypeNormal
	if eff.AchievedLevel != eff.RequestedLevel {
		reason = v1alpha1.ReasonLevelDowngraded
		msg = fmt.Sprintf("durability level %d requested, level %d achieved: %s", eff.RequestedLevel, eff.AchievedLevel, eff.Explanation)
		eventType = corev1.EventTypeWarning
	}
	txs := []statusTx{
		func(run *v1alpha1.BenchmarkRun) bool { run.Status.Durability = &eff; return true },
		setCondition(v1alpha1.ConditionDurabilityResolved, metav1.ConditionTrue, reason, msg),
		version.condition(),
		runTimeoutCheck(run),
		enterPhase(v1alpha1.PhasePending, msg),
	}
	if written, err := r.patchStatus(ctx, run, txs...); err != nil || !written {
		return ctrl.Result{}, err
	}
	r.announce(run, eventType, reason)
	if version.status == metav1.ConditionUnknown && r.Recorder != nil {
		// Said where kubectl describe shows it: the durability may be
		// stated for another version than the brokers run.
		r.Recorder.Eventf(run, nil, corev1.EventTypeWarning, version.reason, string(run.Status.Phase), "%s", version.message)
	}
	return ctrl.Result{}, nil
}

// ReasonImageNotAllowed is the reason of a run refused in Pending for an
// image its operator does not run (workers.ImagePolicy).
const ReasonImageNotAllowed = "ImageNotAllowed"

// imagePolicy is which images the run's pods may run: the operator's
// worker image and its admin's allow-list.
func (r *BenchmarkRunReconciler) imagePolicy() workers.ImagePolicy {
	return workers.ImagePolicy{Default: r.WorkerImage, Allowed: r.AllowedWorkerImages}
}

// joinErrors is every problem of a field list in one message, one after
// the other, each naming its field.
func joinErrors(errs field.ErrorList) string {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

// runTimeoutCheck says in the RunTimeout condition whether
// spec.timeouts.run leaves the workload the time it needs: a deadline below
// the estimate is the user's to choose (a quick look at a long workload),
// but it kills the run before the measured phase ends, so it is said at once.
func runTimeoutCheck(run *v1alpha1.BenchmarkRun) statusTx {
	short, est := workload.ShortTimeout(run.Spec.Workload, run.Spec.Timeouts.Run)
	status, reason, msg := metav1.ConditionTrue, "Sufficient", fmt.Sprintf("the run's deadline is %s (estimate from the workload %s)", workload.RunDeadline(run.Spec.Workload, run.Spec.Timeouts).Round(time.Second), est.Round(time.Second))
	if n := run.Spec.RepeatCount(); n > 1 {
		msg = fmt.Sprintf("each of the run's %d repeats has a deadline of %s, %s in all (estimate from the workload %s per repeat)", n, workload.RunDeadline(run.Spec.Workload, run.Spec.Timeouts).Round(time.Second), workers.RunDeadline(run).Round(time.Second), est.Round(time.Second))
	}
	if short {
		status, reason = metav1.ConditionFalse, "BelowEstimate"
		msg = fmt.Sprintf("spec.timeouts.run (%s) is below the %s the workload needs (warm-up, rate search, backlog build and drain, test, setup, 10 %% margin): the run will likely be stopped before it ends; raise spec.timeouts.run or remove it to use the estimate",
			run.Spec.Timeouts.Run.Duration, est.Round(time.Second))
	}
	return setCondition(v1alpha1.ConditionRunTimeout, status, reason, msg)
}

// reconcilePending reads the files the run names in ConfigMaps, checks the
// Secrets it names, deploys the brokers (nothing for an existing cluster)
// and starts the provisioning clock. A bad file or a missing Secret or key
// fails the run before anything is deployed.
func (r *BenchmarkRunReconciler) reconcilePending(ctx context.Context, run *v1alpha1.BenchmarkRun) (ctrl.Result, error) {
	// The image first: a run whose pods would run an image the operator's
	// admin did not allow is refused before any of its files or Secrets
	// is read.
	if err := r.imagePolicy().Check(run); err != nil {
		return r.fail(ctx, run, ReasonImageNotAllowed, err.Error())
	}
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
	// The cluster's credentials, before the brokers are looked at: a
	// missing Secret or key fails the run with the fix, and never reaches
	// the pods (a Secret volume that cannot be mounted leaves a pod in
	// ContainerCreating, saying nothing to the run).
	refused, waiting, err := r.checkSecrets(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	if refused != nil {
		return r.fail(ctx, run, refused.reason, refused.message)
	}
	if waiting != "" {
		if run.Status.Message != waiting {
			if _, err := r.patchStatus(ctx, run, setMessage(waiting)); err != nil {
				return ctrl.Result{}, err
			}
		}
		return ctrl.Result{RequeueAfter: min(pollInterval, time.Until(provisioningDeadline(run))+time.Second)}, nil
	}
	// Refused at once rather than after the brokers are up: a run no node
	// can take workers for (phase_pending_placement.go).
	placed, err := r.checkWorkerNodes(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	if placed.refused() {
		return r.fail(ctx, run, placed.reason, placed.message, placed.condition())
	}
	// Refused at once rather than at the provisioning deadline: ZooKeeper's
	// claims with no class, or the bookies' disks (phase_pending_storage.go).
	zkClass, err := r.checkMetadataStoreClass(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	if zkClass.Refused != "" {
		return r.fail(ctx, run, v1alpha1.ReasonMetadataStoreClass, zkClass.Refused)
	}
	// Refused at once rather than after the brokers are up: the privileged
	// page-cache Job is the last step before the load.
	if msg, err := r.checkPodSecurity(ctx, run); err != nil {
		return ctrl.Result{}, err
	} else if msg != "" {
		return r.fail(ctx, run, "PodSecurity", msg)
	}
	// Last, as the brokers would take the nodes: a managed run waits in
	// Queued for other runs on the same nodes (phase_queued.go).
	if res, queued, err := r.waitInQueue(ctx, run); queued || err != nil {
		return res, err
	}
	if err := r.brokersFor(run).Deploy(ctx, run); err != nil {
		return ctrl.Result{}, err
	}
	r.warnMetadataStoreClass(run, zkClass)
	startTime := func(run *v1alpha1.BenchmarkRun) bool {
		if run.Status.StartTime == nil {
			now := metav1.Now()
			run.Status.StartTime = &now
		}
		return true
	}
	return ctrl.Result{RequeueAfter: pollInterval},
		r.moveTo(ctx, run, v1alpha1.PhaseProvisioning, "Provisioning", provisioningMessage(run), startTime, filesTx(run.Status.Driver, run.Status.PriceModel), placed.condition(),
			setCondition(v1alpha1.ConditionBrokersReady, metav1.ConditionFalse, "Provisioning", "waiting for the brokers"))
}

func provisioningMessage(run *v1alpha1.BenchmarkRun) string {
	switch {
	case run.Spec.Cluster.Existing != nil:
		return "checking the existing cluster"
	case run.Spec.System == v1alpha1.SystemPulsar:
		return "deploying Pulsar with the Helm chart"
	case strimzi.KafkaVersionOf(run) != "":
		return "deploying Kafka " + strimzi.KafkaVersionOf(run) + " with Strimzi"
	default:
		return "deploying Kafka with Strimzi"
	}
}

// filesTx records what Pending read of the run's files: the driver
// settings and the price model (nil: none).
func filesTx(d *v1alpha1.DriverSpec, prices *v1alpha1.PriceModel) statusTx {
	return func(run *v1alpha1.BenchmarkRun) bool {
		if d != nil {
			run.Status.Driver = d
		}
		if prices != nil {
			run.Status.PriceModel = prices
		}
		return true
	}
}
