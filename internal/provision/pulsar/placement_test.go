package pulsar

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// podSpecs are the pod templates of the rendered chart's StatefulSets and
// Jobs, by "<Kind>/<name>".
func podSpecs(t *testing.T, docs []map[string]any) map[string]corev1.PodSpec {
	t.Helper()
	out := map[string]corev1.PodSpec{}
	for _, d := range docs {
		kind, _ := d["kind"].(string)
		if kind != "StatefulSet" && kind != "Job" {
			continue
		}
		spec, ok := nested(d, "spec", "template", "spec")
		if !ok {
			t.Fatalf("%s without spec.template.spec", kind)
		}
		b, err := json.Marshal(spec)
		if err != nil {
			t.Fatal(err)
		}
		var ps corev1.PodSpec
		if err := json.Unmarshal(b, &ps); err != nil {
			t.Fatal(err)
		}
		meta, _ := nested(d, "metadata")
		name, _ := meta["name"].(string)
		out[kind+"/"+name] = ps
	}
	return out
}

// TestChartPlacement renders the upstream chart with the run's values and
// post-render and checks where each component may go: the data path
// (bookies, brokers) one per node on the pool; ZooKeeper, autorecovery
// and the init Jobs where auxiliaryPlacement says, or, without it, away
// from the pool where they can.
func TestChartPlacement(t *testing.T) {
	streaming := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "streaming", Effect: corev1.TaintEffectNoSchedule}
	system := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "system", Effect: corev1.TaintEffectNoSchedule}
	pool := func(r *v1alpha1.BenchmarkRun) {
		r.Spec.Cluster.Managed.Placement = v1alpha1.Placement{
			NodeSelector: map[string]string{"node-pool": "streaming"},
			Tolerations:  []corev1.Toleration{streaming},
		}
	}
	systemNodes := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
			Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"},
		}}}},
	}}}
	offPool := &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
		Weight: 100, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
			Key: "node-pool", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"streaming"},
		}}},
	}}}
	type where struct {
		nodeSelector map[string]string
		tolerations  []corev1.Toleration
		nodeAffinity *corev1.NodeAffinity
	}
	const rel = "run-a-pulsar"
	auxiliary := []string{"StatefulSet/" + rel + "-zookeeper", "StatefulSet/" + rel + "-recovery", "Job/" + rel + "-pulsar-init", "Job/" + rel + "-bookie-init"}
	for _, tc := range []struct {
		name   string
		run    *v1alpha1.BenchmarkRun
		dataAt where
		auxAt  where
	}{
		{
			name:   "no auxiliaryPlacement: off the pool where there is room, its taints tolerated",
			run:    newRun(pool),
			dataAt: where{map[string]string{"node-pool": "streaming"}, []corev1.Toleration{streaming}, nil},
			auxAt:  where{nil, []corev1.Toleration{streaming}, offPool},
		},
		{
			name: "auxiliaryPlacement: used as it is",
			run: newRun(pool, func(r *v1alpha1.BenchmarkRun) {
				r.Spec.Cluster.Managed.AuxiliaryPlacement = &v1alpha1.Placement{
					NodeSelector: map[string]string{"node-pool": "system"},
					Affinity:     systemNodes,
					Tolerations:  []corev1.Toleration{system},
				}
			}),
			dataAt: where{map[string]string{"node-pool": "streaming"}, []corev1.Toleration{streaming}, nil},
			auxAt:  where{map[string]string{"node-pool": "system"}, []corev1.Toleration{system}, systemNodes.NodeAffinity},
		},
		{
			name:  "no placement at all: nothing to avoid, nothing to tolerate",
			run:   newRun(),
			auxAt: where{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pods := podSpecs(t, renderChart(t, tc.run))
			check := func(name string, want where) {
				t.Helper()
				got, ok := pods[name]
				if !ok {
					t.Fatalf("the chart rendered no %s", name)
				}
				var na *corev1.NodeAffinity
				if got.Affinity != nil {
					na = got.Affinity.NodeAffinity
				}
				if diff := cmp.Diff(where{want.nodeSelector, want.tolerations, want.nodeAffinity}, where{got.NodeSelector, got.Tolerations, na},
					cmp.AllowUnexported(where{})); diff != "" {
					t.Errorf("%s placement (-want +got):\n%s", name, diff)
				}
			}
			for _, c := range []string{ComponentBookie, ComponentBroker} {
				name := "StatefulSet/" + rel + "-" + c
				check(name, tc.dataAt)
				// One per node, required: two bookies of an ensemble on
				// one machine would not be three copies on three.
				a := pods[name].Affinity
				if a == nil || a.PodAntiAffinity == nil || len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 ||
					a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey != corev1.LabelHostname {
					t.Errorf("%s: want one required pod anti-affinity term per hostname, got %+v", name, a)
				}
			}
			for _, name := range auxiliary {
				check(name, tc.auxAt)
			}
			// ZooKeeper spreads where it can, but a small cluster still
			// runs it (off the write path).
			zk := pods["StatefulSet/"+rel+"-zookeeper"].Affinity
			if zk == nil || zk.PodAntiAffinity == nil || len(zk.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 0 ||
				len(zk.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 {
				t.Errorf("zookeeper: want one preferred pod anti-affinity term and no required one, got %+v", zk)
			}
		})
	}
}
