package controllers

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
)

// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch

// The Kafka version of a managed Kafka run is decided once, when the run
// is new, from the Strimzi that will deploy it: the durability is stated
// for that version (status.durability.brokerVersion, which says whether
// the level was verified on it) and the Kafka names the same version
// (strimzi.KafkaVersionOf), so the two cannot part when Strimzi is another
// release than the one streambench's defaults were written for.

// brokerVersionDecision is the broker version a new run's durability is
// stated for, and for a managed Kafka run how it was chosen.
type brokerVersionDecision struct {
	version string
	// status, reason and message are the BrokerVersionResolved
	// condition's; status is empty for a run that is not a managed Kafka
	// run (it gets no such condition).
	status          metav1.ConditionStatus
	reason, message string
}

// refused says whether the run must fail: Strimzi would refuse its Kafka.
func (d brokerVersionDecision) refused() bool { return d.status == metav1.ConditionFalse }

// condition records the decision on the run (nothing when there is none).
func (d brokerVersionDecision) condition() statusTx {
	return func(run *v1alpha1.BenchmarkRun) bool {
		if d.status != "" {
			run.SetCondition(v1alpha1.ConditionBrokerVersionResolved, d.status, d.reason, d.message)
		}
		return true
	}
}

// brokerVersion decides the broker version of a new run: for a managed
// Kafka run, from spec.cluster.managed.version and the versions the
// installed Strimzi supports (strimzi.ChooseKafkaVersion). An unpinned
// managed Pulsar takes whatever image the configured chart names, and an
// existing cluster is whatever it is, so both are "" (not known) here; for
// an existing cluster the coordinator reads the version and the settings
// from the brokers and replaces status.durability.
func (r *BenchmarkRunReconciler) brokerVersion(ctx context.Context, run *v1alpha1.BenchmarkRun) (brokerVersionDecision, error) {
	m := run.Spec.Cluster.Managed
	switch {
	case m == nil:
		return brokerVersionDecision{}, nil
	case run.Spec.System != v1alpha1.SystemKafka:
		return brokerVersionDecision{version: m.Version}, nil
	}
	ops, notFound, err := r.strimziOperators(ctx, run.Namespace)
	if err != nil {
		return brokerVersionDecision{}, err
	}
	choice, err := strimzi.ChooseKafkaVersion(run, ops, notFound)
	if err != nil {
		return brokerVersionDecision{status: metav1.ConditionFalse, reason: strimzi.ReasonUnsupportedVersion, message: err.Error()}, nil
	}
	d := brokerVersionDecision{version: choice.Version, status: metav1.ConditionTrue, reason: choice.Reason, message: choice.Message}
	if !choice.Named {
		d.status = metav1.ConditionUnknown
	}
	return d, nil
}

// strimziOperators are the Strimzi cluster operators streambench can see,
// the one that deploys the Kafkas of namespace first
// (strimzi.ClusterOperators); with none, notFound says why. It reads the
// API server, not the cache: the cache may hold only the watched
// namespaces (--watch-namespaces), and a look once per run needs no
// informer over every Deployment. The generated ClusterRole lists
// Deployments everywhere; under the chart's watchNamespaces the role
// grants it in those namespaces only, and the run's namespace is listed
// instead.
func (r *BenchmarkRunReconciler) strimziOperators(ctx context.Context, namespace string) (ops []strimzi.Operator, notFound string, err error) {
	where := "the cluster"
	deps, err := listDeployments(ctx, r.apiReader())
	if apierrors.IsForbidden(err) {
		where = "namespace " + namespace + " (the operator's role does not let it list Deployments in other namespaces, as under the chart's watchNamespaces)"
		deps, err = listDeployments(ctx, r.apiReader(), client.InNamespace(namespace))
	}
	if apierrors.IsForbidden(err) {
		return nil, fmt.Sprintf("the operator's role does not let it list Deployments, in all namespaces or in %s", namespace), nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("listing Deployments to find Strimzi's cluster operator: %w", err)
	}
	if ops = strimzi.ClusterOperators(deps, namespace); len(ops) == 0 {
		return nil, fmt.Sprintf("no Deployment in %s runs a Strimzi cluster operator (a container with env %s)", where, strimzi.KafkaImagesEnv), nil
	}
	return ops, "", nil
}

// listDeployments lists in pages, so a cluster with many Deployments is
// not read in one response.
func listDeployments(ctx context.Context, reader client.Reader, opts ...client.ListOption) ([]appsv1.Deployment, error) {
	var out []appsv1.Deployment
	next := ""
	for {
		var page appsv1.DeploymentList
		if err := reader.List(ctx, &page, append(opts, client.Limit(250), client.Continue(next))...); err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
		if next = page.Continue; next == "" {
			return out, nil
		}
	}
}
