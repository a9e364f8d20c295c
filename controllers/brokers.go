package controllers

import (
	"context"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// brokers is one way of getting the system under test: deployed by Strimzi,
// deployed by the Pulsar Helm chart, or already running. Every method is
// idempotent and never blocks on a long operation, so a restarted operator
// can call them again for a run that is half way through.
type brokers interface {
	// Deploy creates what the run needs (nothing for existing clusters).
	Deploy(ctx context.Context, run *v1alpha1.BenchmarkRun) error
	// Ready reports whether the brokers take the workload and where they
	// are; reason says what is missing. An error marked permanent (the
	// brokers cannot become ready) fails the run; any other (a timeout or
	// a 5xx of the API server) is retried with backoff within
	// spec.timeouts.provisioning.
	Ready(ctx context.Context, run *v1alpha1.BenchmarkRun) (endpoints *v1alpha1.BrokerEndpoints, reason string, err error)
	// Teardown removes what Deploy created; done is false while removal is
	// still under way.
	Teardown(ctx context.Context, run *v1alpha1.BenchmarkRun) (done bool, err error)
}

// brokersFor picks the provisioner of a run.
func (r *BenchmarkRunReconciler) brokersFor(run *v1alpha1.BenchmarkRun) brokers {
	switch {
	case run.Spec.Cluster.Existing != nil:
		return existingBrokers{r.Client}
	case run.Spec.System == v1alpha1.SystemPulsar:
		return r.pulsarBrokers()
	default:
		return strimziBrokers{Client: r.Client}
	}
}
