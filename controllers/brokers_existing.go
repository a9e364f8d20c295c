package controllers

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
)

// existingBrokers uses brokers that run already: nothing is deployed or
// removed; a named Strimzi cluster gives the bootstrap address of the
// listener that fits the run's TLS and authentication.
type existingBrokers struct{ client.Client }

func (existingBrokers) Deploy(context.Context, *v1alpha1.BenchmarkRun) error { return nil }

func (b existingBrokers) Ready(ctx context.Context, run *v1alpha1.BenchmarkRun) (*v1alpha1.BrokerEndpoints, string, error) {
	e := run.Spec.Cluster.Existing
	if e.StrimziCluster == nil {
		return &v1alpha1.BrokerEndpoints{BootstrapServers: e.BootstrapServers, ServiceURL: e.ServiceURL, AdminURL: e.AdminURL}, "", nil
	}
	if err := strimzi.CRDsInstalled(b.RESTMapper()); err != nil {
		return nil, "", permanent(fmt.Errorf("spec.cluster.existing.strimziCluster: %w", err))
	}
	ns := e.StrimziCluster.Namespace
	if ns == "" {
		ns = run.Namespace
	}
	kafka := strimziRef(strimzi.KafkaGVK, ns, e.StrimziCluster.Name)
	if err := b.Get(ctx, client.ObjectKeyFromObject(kafka), kafka); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Sprintf("Strimzi Kafka %s/%s (spec.cluster.existing.strimziCluster) does not exist yet", ns, e.StrimziCluster.Name), nil
		}
		return nil, "", err
	}
	// The listener is chosen from the Kafka's spec before it is ready, so
	// a cluster without one for these clients fails the run at once.
	listener, err := strimzi.SelectListener(kafka, strimzi.NeedsOf(e))
	if err != nil {
		return nil, "", permanent(err)
	}
	if ready, reason := strimzi.Ready(kafka); !ready {
		return nil, reason, nil
	}
	bootstrap, waiting := strimzi.ListenerBootstrap(kafka, listener.Name)
	if bootstrap == "" {
		return nil, waiting, nil
	}
	return &v1alpha1.BrokerEndpoints{BootstrapServers: bootstrap}, "", nil
}

func (existingBrokers) Teardown(context.Context, *v1alpha1.BenchmarkRun) (bool, error) {
	return true, nil
}
