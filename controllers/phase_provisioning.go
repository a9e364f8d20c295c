package controllers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/workers"
)

// +kubebuilder:rbac:groups="",resources=services;serviceaccounts;secrets,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create;delete

// reconcileProvisioning waits, within spec.timeouts.provisioning, for the
// brokers; once they are ready it starts the workers and the coordinator.
func (r *BenchmarkRunReconciler) reconcileProvisioning(ctx context.Context, run *v1alpha1.BenchmarkRun) (ctrl.Result, error) {
	endpoints, reason, err := r.brokersFor(run).Ready(ctx, run)
	deadline := provisioningDeadline(run)
	switch {
	case err != nil && isPermanent(err):
		return r.fail(ctx, run, "BrokersFailed", err.Error())
	case err != nil && time.Now().After(deadline):
		return r.fail(ctx, run, "ProvisioningTimeout", fmt.Sprintf(
			"the brokers' readiness could not be read within spec.timeouts.provisioning (%s): %v", provisioningTimeout(run), err))
	case err != nil:
		// A timeout or a 5xx of the API server: retried with the
		// controller's backoff.
		return ctrl.Result{}, err
	}
	if endpoints == nil {
		if time.Now().After(deadline) {
			return r.fail(ctx, run, "ProvisioningTimeout", fmt.Sprintf(
				"the brokers were not ready within spec.timeouts.provisioning (%s): %s", provisioningTimeout(run), reason))
		}
		if run.Status.Message != reason && reason != "" {
			if _, err := r.patchStatus(ctx, run, setMessage(reason)); err != nil {
				return ctrl.Result{}, err
			}
		}
		return ctrl.Result{RequeueAfter: min(pollInterval, time.Until(deadline)+time.Second)}, nil
	}

	// Before any load: measure the ground the brokers stand on (and drop
	// the page cache when asked). Its Jobs are bounded by their own
	// deadlines, not the provisioning one: the brokers are ready.
	if done, res, err := r.reconcileTestbed(ctx, run); err != nil || !done {
		return res, err
	}

	// status.monitoring is what the coordinator's Job is built from
	// (startWorkers reads it from run), and it is kept with the move.
	if err := r.reconcileMonitoring(ctx, run); err != nil {
		return ctrl.Result{}, err
	}
	mon := run.Status.Monitoring
	if err := r.startWorkers(ctx, run, *endpoints); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: pollInterval},
		r.moveTo(ctx, run, v1alpha1.PhaseRunning, "Running", fmt.Sprintf("running the workload against %s", brokersMessage(endpoints)),
			func(run *v1alpha1.BenchmarkRun) bool {
				run.Status.Brokers, run.Status.Monitoring = endpoints, mon
				return true
			},
			setCondition(v1alpha1.ConditionBrokersReady, metav1.ConditionTrue, "Ready", brokersMessage(endpoints)),
			setCondition(v1alpha1.ConditionWorkersCompleted, metav1.ConditionFalse, "Running", "the coordinator drives the workload"))
}

func provisioningTimeout(run *v1alpha1.BenchmarkRun) time.Duration {
	if t := run.Spec.Timeouts.Provisioning; t != nil {
		return t.Duration
	}
	return 20 * time.Minute
}

func provisioningDeadline(run *v1alpha1.BenchmarkRun) time.Time {
	start := run.CreationTimestamp.Time
	if run.Status.StartTime != nil {
		start = run.Status.StartTime.Time
	}
	return start.Add(provisioningTimeout(run))
}

func brokersMessage(e *v1alpha1.BrokerEndpoints) string {
	if e.BootstrapServers != "" {
		return "bootstrap " + e.BootstrapServers
	}
	return "service " + e.ServiceURL
}

// startWorkers creates the run's token, the coordinator's permission to
// write the results, the workers' headless Service, the worker Job and the
// coordinator Job, all owned by the run.
func (r *BenchmarkRunReconciler) startWorkers(ctx context.Context, run *v1alpha1.BenchmarkRun, brokers v1alpha1.BrokerEndpoints) error {
	// Pending checked it; a run that passed Pending under an operator with
	// another allow-list (restarted with new flags) is checked again
	// before its image reaches a pod.
	if err := r.imagePolicy().Check(run); err != nil {
		return permanent(err)
	}
	coordinator, err := workers.CoordinatorJob(run, r.WorkerImage, brokers)
	if err != nil {
		return permanent(err)
	}
	// A retried reconcile draws a new token, but the Secret that exists
	// already (the run's own) keeps the first.
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return err
	}
	token := workers.TokenSecret(run, hex.EncodeToString(raw))
	sa, role, binding := workers.CoordinatorRBAC(run)
	for _, obj := range []client.Object{token, sa, role, binding, workers.Service(run), workers.WorkerJob(run, r.WorkerImage), coordinator} {
		if err := createOwned(ctx, r.Client, run, obj); err != nil {
			return err
		}
	}
	return nil
}
