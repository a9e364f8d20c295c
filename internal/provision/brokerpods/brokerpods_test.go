package brokerpods

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
)

func run(system v1alpha1.System, managed bool) *v1alpha1.BenchmarkRun {
	r := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "r1", Namespace: "bench"}}
	r.Spec.System = system
	if managed {
		r.Spec.Cluster.Managed = &v1alpha1.ManagedCluster{}
	} else {
		r.Spec.Cluster.Existing = &v1alpha1.ExistingCluster{BootstrapServers: "k:9092"}
	}
	return r
}

// TestGroups: each system's roles, their labels as the builders define
// them and the workload that makes them; the brokers last; nothing for an
// existing cluster.
func TestGroups(t *testing.T) {
	kafka, pul := run(v1alpha1.SystemKafka, true), run(v1alpha1.SystemPulsar, true)
	rel := pulsar.ReleaseName(pul)
	sts := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}
	for _, tc := range []struct {
		name string
		run  *v1alpha1.BenchmarkRun
		want []Group
		all  map[string]string
	}{
		{"kafka", kafka, []Group{{v1alpha1.RoleBroker,
			map[string]string{strimzi.LabelCluster: strimzi.ClusterName(kafka), "strimzi.io/broker-role": "true"},
			strimzi.PodSetGVK, strimzi.PodSetName(kafka)}},
			map[string]string{strimzi.LabelCluster: strimzi.ClusterName(kafka)}},
		{"pulsar", pul, []Group{
			{v1alpha1.RoleBookie, map[string]string{"app": "pulsar", "release": rel, "component": "bookie"},
				sts, rel + "-bookie"},
			{v1alpha1.RoleBroker, map[string]string{"app": "pulsar", "release": rel, "component": "broker"},
				sts, rel + "-broker"},
		}, map[string]string{"app": "pulsar", "release": rel}},
		{"existing kafka", run(v1alpha1.SystemKafka, false), nil, nil},
		{"existing pulsar", run(v1alpha1.SystemPulsar, false), nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Groups(tc.run)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Groups = %+v, want %+v", got, tc.want)
			}
			if all := All(tc.run); !reflect.DeepEqual(all, tc.all) {
				t.Errorf("All = %v, want %v", all, tc.all)
			}
			b, ok := Brokers(tc.run)
			if ok != (len(tc.want) > 0) || (ok && !reflect.DeepEqual(b, tc.want[len(tc.want)-1])) {
				t.Errorf("Brokers = %+v, %v; want the last group", b, ok)
			}
			// A group's pods are among All's: every label All asks for is
			// on them, with its value.
			for _, g := range got {
				for k, v := range tc.all {
					if g.Labels[k] != v {
						t.Errorf("group %s has %s=%q, All asks %q: its pods would not be among the run's", g.Role, k, g.Labels[k], v)
					}
				}
			}
		})
	}
}
