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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/provision/brokerpods"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
)

// +kubebuilder:rbac:groups=kafka.strimzi.io,resources=kafkas;kafkanodepools,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=kafka.strimzi.io,resources=kafkausers,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch;delete

// strimziBrokers deploys Kafka through the Strimzi operator: a Kafka, its
// KafkaNodePool, the JMX metrics ConfigMap and, when the clients
// authenticate, a KafkaUser, all owned by the run, or by
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
	user, err := strimzi.KafkaUser(run)
	if err != nil {
		return permanent(err)
	}
	if user != nil {
		if err := strimzi.KafkaUserCRDInstalled(b.RESTMapper()); err != nil {
			return permanent(err)
		}
		objs = append(objs, user)
	}
	for _, obj := range objs {
		if err := createOwned(ctx, b.Client, b.ownerOf(run), obj); err != nil {
			return err
		}
	}
	return nil
}

// ownerOf is what controls the objects Deploy made for run: the run, or
// the suite that deploys its clusters.
func (b strimziBrokers) ownerOf(run *v1alpha1.BenchmarkRun) client.Object {
	if b.owner != nil {
		return b.owner
	}
	return run
}

// kafka is the run's Kafka, read by its name; one the run (or its suite)
// no longer controls fails the run: its readiness and its bootstrap, to
// which the run's clients would take their credentials, are not the
// run's brokers' (issue 58).
func (b strimziBrokers) kafka(ctx context.Context, run *v1alpha1.BenchmarkRun) (*unstructured.Unstructured, error) {
	kafka := strimziRef(strimzi.KafkaGVK, run.Namespace, strimzi.ClusterName(run))
	if err := b.Get(ctx, client.ObjectKeyFromObject(kafka), kafka); err != nil {
		return kafka, err
	}
	if err := notOwnedAnyMore(kafka, b.ownerOf(run)); err != nil {
		return nil, err
	}
	return kafka, nil
}

// notOwnedAnyMore fails permanently when obj, which the run's Deploy
// created, is no longer controlled by owner: replaced by someone else's of
// the same name, or taken over.
func notOwnedAnyMore(obj, owner client.Object) error {
	if metav1.IsControlledBy(obj, owner) {
		return nil
	}
	return permanent(fmt.Errorf("%s %s/%s is no longer controlled by %s (it has %s): it was replaced or taken over while the run waited for it, so its status is not that of the brokers the run deployed; streambench neither uses nor deletes it",
		obj.GetObjectKind().GroupVersionKind().Kind, obj.GetNamespace(), obj.GetName(), owner.GetName(), notControlled(obj)))
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
	endpoints, reason := strimziEndpoints(kafka, run)
	if endpoints != nil && strimzi.NeedsUser(run) {
		// The clients' Secret: the User Operator writes it, and the
		// brokers' credentials, before it marks the KafkaUser Ready; the
		// Jobs mount it, so they must not start before.
		if waiting, err := b.userReady(ctx, run); err != nil || waiting != "" {
			return nil, waiting, err
		}
	}
	if endpoints == nil {
		// Strimzi says only that it waits for its pods; the scheduler says
		// why a broker pod has no node (the anti-affinity, resources).
		var pods corev1.PodList
		brokers, _ := brokerpods.Brokers(run)
		if err := b.List(ctx, &pods, client.InNamespace(run.Namespace), client.MatchingLabels(brokers.Labels)); err != nil {
			return nil, "", err
		}
		if why := strimzi.UnschedulableBrokers(pods.Items); why != "" {
			reason = strings.Join(slices.DeleteFunc([]string{reason, why}, func(s string) bool { return s == "" }), "; ")
		}
	}
	return endpoints, reason, nil
}

// strimziEndpoints is the bootstrap of a Strimzi Kafka once it is ready, or
// what it still lacks: that of the listener the run's clients can use (the
// builder made it for them: TLS and authentication as
// spec.cluster.managed.security asks).
func strimziEndpoints(kafka *unstructured.Unstructured, run *v1alpha1.BenchmarkRun) (*v1alpha1.BrokerEndpoints, string) {
	if ready, reason := strimzi.Ready(kafka); !ready {
		return nil, reason
	}
	l, err := strimzi.SelectListener(kafka, strimzi.ManagedNeeds(run))
	if err != nil {
		return nil, err.Error()
	}
	bootstrap, err := strimzi.Bootstrap(kafka, l)
	if err != nil {
		return nil, err.Error()
	}
	return &v1alpha1.BrokerEndpoints{BootstrapServers: bootstrap}, ""
}

// userReady says what the run's KafkaUser still lacks; "" once the User
// Operator has served it. A deleted KafkaUser fails the run: nothing
// creates it again.
func (b strimziBrokers) userReady(ctx context.Context, run *v1alpha1.BenchmarkRun) (string, error) {
	user := strimziRef(strimzi.KafkaUserGVK, run.Namespace, strimzi.UserName(run))
	err := b.Get(ctx, client.ObjectKeyFromObject(user), user)
	if apierrors.IsNotFound(err) {
		return "", permanent(fmt.Errorf("KafkaUser %s was deleted while the run waited for it; the run's clients authenticate as it (spec.cluster.managed.security.authentication)", user.GetName()))
	}
	if err != nil {
		return "", err
	}
	if err := notOwnedAnyMore(user, b.ownerOf(run)); err != nil {
		return "", err
	}
	_, reason := strimzi.UserReady(user)
	return reason, nil
}

// Teardown deletes the Kafka and its pools explicitly rather than waiting
// for garbage collection, so a deleted run frees the NVMe nodes at once;
// Strimzi deletes the PVCs with deleteClaim. The KafkaUser goes with them
// (its Secret is the KafkaUser's, by an owner reference the User Operator
// sets; its SCRAM credentials live in the brokers' metadata log).
func (b strimziBrokers) Teardown(ctx context.Context, run *v1alpha1.BenchmarkRun) (bool, error) {
	if err := strimzi.CRDsInstalled(b.RESTMapper()); err != nil {
		return true, nil // nothing of Strimzi's can exist
	}
	// Deleting needs only kind, name and namespace; the builders would also
	// re-validate a spec that is long past validation.
	return deleteAll(ctx, b.Client, b.ownerOf(run),
		strimziRef(strimzi.KafkaUserGVK, run.Namespace, strimzi.UserName(run)),
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
