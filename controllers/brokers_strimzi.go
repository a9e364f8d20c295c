package controllers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
)

// +kubebuilder:rbac:groups=kafka.strimzi.io,resources=kafkas;kafkanodepools,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch;delete

// strimziBrokers deploys Kafka through the Strimzi operator: a Kafka, its
// KafkaNodePool and the JMX metrics ConfigMap, all owned by the run, or by
// owner when set: a BenchmarkSuite deploys its clusters from a run that
// exists only in memory (internal/suite.HostRun), and owns them itself.
type strimziBrokers struct {
	client.Client
	owner client.Object
}

func (b strimziBrokers) Deploy(ctx context.Context, run *v1alpha1.BenchmarkRun) error {
	if err := strimzi.CRDsInstalled(b.RESTMapper()); err != nil {
		return permanent(err)
	}
	eff, err := durability.Translate(run.Spec.System, run.Spec.DurabilityOrDefault())
	if err != nil {
		return permanent(err)
	}
	kafka, err := strimzi.Kafka(run, eff)
	if err != nil {
		return permanent(err)
	}
	pools, err := strimzi.NodePools(run)
	if err != nil {
		return permanent(err)
	}
	objs := []client.Object{strimzi.MetricsConfigMap(run), kafka}
	for _, p := range pools {
		objs = append(objs, p)
	}
	var owner client.Object = run
	if b.owner != nil {
		owner = b.owner
	}
	for _, obj := range objs {
		if err := createOwned(ctx, b.Client, owner, obj); err != nil {
			return err
		}
	}
	return nil
}

func (b strimziBrokers) kafka(ctx context.Context, run *v1alpha1.BenchmarkRun) (*unstructured.Unstructured, error) {
	kafka := strimziRef(strimzi.KafkaGVK, run.Namespace, strimzi.ClusterName(run))
	err := b.Get(ctx, client.ObjectKeyFromObject(kafka), kafka)
	return kafka, err
}

func (b strimziBrokers) Ready(ctx context.Context, run *v1alpha1.BenchmarkRun) (*v1alpha1.BrokerEndpoints, string, error) {
	kafka, err := b.kafka(ctx, run)
	if apierrors.IsNotFound(err) {
		return nil, "", permanent(fmt.Errorf("Kafka %s was deleted while the run waited for it", strimzi.ClusterName(run)))
	}
	if err != nil {
		return nil, "", err
	}
	if failed, why := strimzi.Failed(kafka, time.Now()); failed {
		return nil, "", permanent(errors.New(why))
	}
	endpoints, reason := strimziEndpoints(kafka)
	if endpoints == nil {
		// Strimzi says only that it waits for its pods; the scheduler says
		// why a broker pod has no node (the anti-affinity, resources).
		var pods corev1.PodList
		if err := b.List(ctx, &pods, client.InNamespace(run.Namespace), client.MatchingLabels(strimzi.BrokerPodLabels(strimzi.ClusterName(run)))); err != nil {
			return nil, "", err
		}
		if why := strimzi.UnschedulableBrokers(pods.Items); why != "" {
			reason = strings.Join(slices.DeleteFunc([]string{reason, why}, func(s string) bool { return s == "" }), "; ")
		}
	}
	return endpoints, reason, nil
}

// strimziEndpoints is the bootstrap of a Strimzi Kafka once it is ready, or
// what it still lacks.
func strimziEndpoints(kafka *unstructured.Unstructured) (*v1alpha1.BrokerEndpoints, string) {
	if ready, reason := strimzi.Ready(kafka); !ready {
		return nil, reason
	}
	bootstrap, err := strimzi.Bootstrap(kafka)
	if err != nil {
		return nil, err.Error()
	}
	return &v1alpha1.BrokerEndpoints{BootstrapServers: bootstrap}, ""
}

// Teardown deletes the Kafka and its pools explicitly rather than waiting
// for garbage collection, so a deleted run frees the NVMe nodes at once;
// Strimzi deletes the PVCs with deleteClaim.
func (b strimziBrokers) Teardown(ctx context.Context, run *v1alpha1.BenchmarkRun) (bool, error) {
	if err := strimzi.CRDsInstalled(b.RESTMapper()); err != nil {
		return true, nil // nothing of Strimzi's can exist
	}
	// Deleting needs only kind, name and namespace; the builders would also
	// re-validate a spec that is long past validation.
	var owner client.Object = run
	if b.owner != nil {
		owner = b.owner
	}
	return deleteAll(ctx, b.Client, owner,
		strimziRef(strimzi.KafkaGVK, run.Namespace, strimzi.ClusterName(run)),
		strimziRef(strimzi.KafkaNodePoolGVK, run.Namespace, strimzi.PoolName(run)),
		strimzi.MetricsConfigMap(run))
}

// strimziRef is a Strimzi object known by its name only.
func strimziRef(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	obj.SetNamespace(namespace)
	obj.SetName(name)
	return obj
}
