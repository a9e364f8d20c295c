// Package brokerpods names the pods of a managed run's brokers, in one
// place: the labels Strimzi and the Apache Pulsar chart put on them (which
// their builders in internal/provision/strimzi and internal/provision/pulsar
// define), and the workload that makes each role's pods. The testbed's
// probes, the Java probe, the readiness messages, the fault targets and a
// suite's deployed faults all select by these; an existing cluster's pods
// are not the run's to name (spec.cluster.existing.faults selects them).
// Pure.
package brokerpods

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
)

// Group is one role's pods and the workload that makes them: labels
// select them (anyone who may create a pod in the namespace can copy
// labels, so a caller that trusts the pods checks their controller is
// Owner, named OwnerName).
type Group struct {
	Role      v1alpha1.FaultRole // RoleBroker or RoleBookie
	Labels    map[string]string
	Owner     schema.GroupVersionKind
	OwnerName string
}

// Groups are the pods of a managed run's brokers by role, the brokers
// last: Kafka's brokers (Strimzi's node pool, a StrimziPodSet); Pulsar's
// bookies and brokers (the chart's StatefulSets). Nil for an existing
// cluster.
func Groups(run *v1alpha1.BenchmarkRun) []Group {
	if run.Spec.Cluster.Managed == nil {
		return nil
	}
	if run.Spec.System == v1alpha1.SystemPulsar {
		rel := pulsar.ReleaseName(run)
		sts := appsv1.SchemeGroupVersion.WithKind("StatefulSet")
		return []Group{
			{v1alpha1.RoleBookie, pulsar.ComponentPodLabels(rel, pulsar.ComponentBookie), sts, pulsar.StatefulSetName(rel, pulsar.ComponentBookie)},
			{v1alpha1.RoleBroker, pulsar.ComponentPodLabels(rel, pulsar.ComponentBroker), sts, pulsar.StatefulSetName(rel, pulsar.ComponentBroker)},
		}
	}
	return []Group{{v1alpha1.RoleBroker, strimzi.BrokerPodLabels(strimzi.ClusterName(run)), strimzi.PodSetGVK, strimzi.PodSetName(run)}}
}

// Brokers is the group of the brokers themselves (Groups' last).
func Brokers(run *v1alpha1.BenchmarkRun) (Group, bool) {
	gs := Groups(run)
	if len(gs) == 0 {
		return Group{}, false
	}
	return gs[len(gs)-1], true
}

// All select every pod of a managed run's cluster, whatever its role
// (Kafka's brokers and controllers; Pulsar's bookies, brokers, ZooKeeper
// and the rest of the release): where a fault's target is looked for,
// and what a scheduler's refusals are read from. Nil for an existing
// cluster.
func All(run *v1alpha1.BenchmarkRun) map[string]string {
	switch {
	case run.Spec.Cluster.Managed == nil:
		return nil
	case run.Spec.System == v1alpha1.SystemPulsar:
		return pulsar.PodLabels(pulsar.ReleaseName(run))
	default:
		return map[string]string{strimzi.LabelCluster: strimzi.ClusterName(run)}
	}
}
