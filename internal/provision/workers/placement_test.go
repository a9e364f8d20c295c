package workers

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// The workers and the coordinator are spread over the placement's nodes by
// a soft constraint on the run's workers; a placement with its own pod
// (anti-)affinity keeps only that.
func TestLoadPodsSpreadOverNodes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		affinity *corev1.Affinity
		spread   bool
	}{
		{name: "no affinity", spread: true},
		{name: "node affinity only", affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}, spread: true},
		{name: "pod affinity keeps the workers together on purpose", affinity: &corev1.Affinity{PodAffinity: &corev1.PodAffinity{}}},
		{name: "the user's own anti-affinity", affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(v1alpha1.SystemKafka)
			r.Spec.Workers.Placement.Affinity = tc.affinity
			coord, err := CoordinatorJob(r, "img", v1alpha1.BrokerEndpoints{BootstrapServers: "k:9092"})
			if err != nil {
				t.Fatal(err)
			}
			for _, spec := range []corev1.PodSpec{WorkerJob(r, "img").Spec.Template.Spec, coord.Spec.Template.Spec} {
				if !reflect.DeepEqual(spec.Affinity, tc.affinity) {
					t.Errorf("affinity = %+v, want the placement's %+v", spec.Affinity, tc.affinity)
				}
				got := spec.TopologySpreadConstraints
				if !tc.spread {
					if len(got) != 0 {
						t.Errorf("constraints %+v added to a placement with its own pod affinity", got)
					}
					continue
				}
				if len(got) != 1 {
					t.Fatalf("constraints = %+v, want one", got)
				}
				c := got[0]
				if c.TopologyKey != "kubernetes.io/hostname" || c.MaxSkew != 1 || c.WhenUnsatisfiable != corev1.ScheduleAnyway {
					t.Errorf("constraint = %s maxSkew %d %s, want kubernetes.io/hostname maxSkew 1 ScheduleAnyway", c.TopologyKey, c.MaxSkew, c.WhenUnsatisfiable)
				}
				if want := map[string]string{LabelRun: "r1", LabelRole: RoleWorker}; !reflect.DeepEqual(c.LabelSelector.MatchLabels, want) {
					t.Errorf("selector = %v, want the run's workers %v", c.LabelSelector.MatchLabels, want)
				}
				if c.NodeTaintsPolicy == nil || *c.NodeTaintsPolicy != corev1.NodeInclusionPolicyHonor {
					t.Errorf("nodeTaintsPolicy = %v, want Honor (untolerated nodes are no domain)", c.NodeTaintsPolicy)
				}
			}
			// The selector counts the workers, which carry its labels.
			if tc.spread {
				l := WorkerJob(r, "img").Spec.Template.Labels
				for k, v := range WorkerJob(r, "img").Spec.Template.Spec.TopologySpreadConstraints[0].LabelSelector.MatchLabels {
					if l[k] != v {
						t.Errorf("worker pods carry %s=%q, the spread counts %s=%q", k, l[k], k, v)
					}
				}
			}
		})
	}
}

type nodeOpt func(*corev1.Node)

func node(name string, opts ...nodeOpt) corev1.Node {
	n := corev1.Node{}
	n.Name = name
	n.Labels = map[string]string{corev1.LabelHostname: name}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	for _, o := range opts {
		o(&n)
	}
	return n
}

func label(k, v string) nodeOpt { return func(n *corev1.Node) { n.Labels[k] = v } }
func taint(k, v string, e corev1.TaintEffect) nodeOpt {
	return func(n *corev1.Node) { n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: k, Value: v, Effect: e}) }
}
func cordoned(n *corev1.Node) { n.Spec.Unschedulable = true }
func notReady(n *corev1.Node) {
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady"}}
}

func TestCheckNodes(t *testing.T) {
	clients := v1alpha1.Placement{NodeSelector: map[string]string{"node-pool": "clients"}}
	zoneAffinity := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}},
	}}}
	for _, tc := range []struct {
		name      string
		placement v1alpha1.Placement
		nodes     []corev1.Node
		fit       []string
		says      []string
	}{
		{
			name:  "no placement: any Ready untainted node",
			nodes: []corev1.Node{node("b"), node("a")},
			fit:   []string{"a", "b"},
			says:  []string{"2 of 2 nodes can take the workers under spec.workers.placement (a, b)"},
		},
		{
			name:      "the issue's cluster: only broker nodes",
			placement: clients,
			nodes:     []corev1.Node{node("a", label("node-pool", "streaming")), node("b", label("node-pool", "streaming")), node("c")},
			says: []string{
				"no node can run the workers: 0 of 3 nodes fit spec.workers.placement: a",
				"a (node-pool=streaming), b (node-pool=streaming), c (no node-pool) do not match spec.workers.placement.nodeSelector node-pool=clients",
				"label a client node (kubectl label node NODE node-pool=clients) or change spec.workers.placement.nodeSelector",
				"--worker-node-check=false",
			},
		},
		{
			name:      "a client node among broker nodes",
			placement: clients,
			nodes:     []corev1.Node{node("a", label("node-pool", "streaming")), node("c", label("node-pool", "clients"))},
			fit:       []string{"c"},
			says:      []string{"1 of 2 nodes"},
		},
		{
			name:      "the client node is cordoned, NotReady or tainted",
			placement: clients,
			nodes: []corev1.Node{
				node("a", label("node-pool", "streaming")),
				node("c1", label("node-pool", "clients"), cordoned),
				node("c2", label("node-pool", "clients"), notReady),
				node("c3", label("node-pool", "clients"), taint("dedicated", "clients", corev1.TaintEffectNoSchedule)),
			},
			says: []string{
				"0 of 4 nodes fit",
				"a (node-pool=streaming) does not match spec.workers.placement.nodeSelector node-pool=clients",
				"c1 is cordoned (spec.unschedulable)",
				"c2 (Ready=False: KubeletNotReady) is not Ready",
				"c3 (dedicated=clients:NoSchedule) has taints that spec.workers.placement.tolerations do not tolerate",
				"kubectl uncordon NODE",
				"kubectl taint node c3 dedicated=clients:NoSchedule-",
			},
		},
		{
			name: "a tolerated taint and a PreferNoSchedule one do not keep workers off",
			placement: v1alpha1.Placement{NodeSelector: clients.NodeSelector, Tolerations: []corev1.Toleration{
				{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "clients", Effect: corev1.TaintEffectNoSchedule}}},
			nodes: []corev1.Node{node("c", label("node-pool", "clients"),
				taint("dedicated", "clients", corev1.TaintEffectNoSchedule), taint("soft", "", corev1.TaintEffectPreferNoSchedule))},
			fit: []string{"c"},
		},
		{
			name:      "an untolerated NoExecute taint does",
			placement: v1alpha1.Placement{},
			nodes:     []corev1.Node{node("c", taint("evict", "", corev1.TaintEffectNoExecute))},
			says:      []string{"c (evict:NoExecute) has taints"},
		},
		{
			name:      "required node affinity",
			placement: v1alpha1.Placement{Affinity: zoneAffinity},
			nodes:     []corev1.Node{node("a", label("zone", "b")), node("b", label("zone", "a"))},
			fit:       []string{"b"},
		},
		{
			name:      "required node affinity no node meets",
			placement: v1alpha1.Placement{Affinity: zoneAffinity},
			nodes:     []corev1.Node{node("a", label("zone", "b"))},
			says:      []string{"a does not match the required terms of spec.workers.placement.affinity.nodeAffinity"},
		},
		{
			name:  "a node without a Ready condition (never reported) is not Ready",
			nodes: []corev1.Node{func() corev1.Node { n := node("a"); n.Status.Conditions = nil; return n }()},
			says:  []string{"a (no Ready condition) is not Ready"},
		},
		{
			name:      "no nodes at all",
			placement: clients,
			says:      []string{"no node can run the workers: the cluster has no nodes", "--worker-node-check=false"},
		},
		{
			name:      "many nodes are counted, not all named",
			placement: clients,
			nodes:     []corev1.Node{node("n1"), node("n2"), node("n3"), node("n4"), node("n5"), node("n6"), node("n7")},
			says:      []string{"n5 (no node-pool) and 2 more do not match"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckNodes(tc.placement, tc.nodes)
			if !reflect.DeepEqual(got.Fit, tc.fit) {
				t.Errorf("fit = %v, want %v (%s)", got.Fit, tc.fit, got.Message)
			}
			if got.Total != len(tc.nodes) {
				t.Errorf("total = %d, want %d", got.Total, len(tc.nodes))
			}
			for _, s := range tc.says {
				if !strings.Contains(got.Message, s) {
					t.Errorf("message %q\ndoes not say %q", got.Message, s)
				}
			}
			t.Log(got.Message)
			if len(tc.fit) == 0 && !strings.Contains(got.Message, "spec.workers.placement") {
				t.Errorf("a refusal must name spec.workers.placement: %q", got.Message)
			}
		})
	}
}

func loadPod(name, role, node string) corev1.Pod {
	p := corev1.Pod{}
	p.Name, p.Labels, p.Spec.NodeName = name, map[string]string{LabelRun: "r1", LabelRole: role}, node
	return p
}

func TestPlacementOf(t *testing.T) {
	four := func(nodes ...string) []corev1.Pod {
		var out []corev1.Pod
		for i, n := range nodes[:len(nodes)-1] {
			out = append(out, loadPod("r1-workers-"+string(rune('0'+i)), RoleWorker, n))
		}
		return append(out, loadPod("r1-coordinator-x", RoleCoord, nodes[len(nodes)-1]))
	}
	for _, tc := range []struct {
		name      string
		affinity  *corev1.Affinity
		pods      []corev1.Pod
		done      bool
		nodes     int32
		coLocated bool
		note      string
	}{
		{name: "a worker not scheduled yet", pods: four("a", "b", "", "d", "a")},
		{name: "the coordinator not scheduled yet", pods: four("a", "b", "c", "d", "")},
		{name: "a worker not created yet", pods: four("a", "b", "c", "a")},
		{
			name: "spread, one each", pods: four("a", "b", "c", "d", "a"), done: true, nodes: 4,
			note: "4 workers on 4 nodes, one each; the coordinator on a (with 1 worker)",
		},
		{
			name: "4 workers on 2 nodes", pods: four("a", "b", "a", "b", "c"), done: true, nodes: 2, coLocated: true,
			note: "4 workers on 2 nodes (co-located: a runs 2, b runs 2): workers that share a node share its CPUs and network, so the client side may bound the results; give spec.workers.placement more nodes for a spread; the coordinator on c",
		},
		{
			name: "co-located on purpose", affinity: &corev1.Affinity{PodAffinity: &corev1.PodAffinity{}},
			pods: four("a", "a", "a", "a", "a"), done: true, nodes: 1, coLocated: true,
			note: "4 workers on 1 node (co-located: a runs 4), as spec.workers.placement.affinity asks; the coordinator on a (with 4 workers)",
		},
		{
			name: "other pods of the run are not the load's",
			pods: append(four("a", "b", "c", "d", "a"), func() corev1.Pod { p := loadPod("r1-probe", "probe", "z"); return p }()),
			done: true, nodes: 4, note: "4 workers on 4 nodes, one each; the coordinator on a (with 1 worker)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(v1alpha1.SystemKafka)
			r.Spec.Workers.Placement.Affinity = tc.affinity
			got, done := PlacementOf(r, tc.pods)
			if done != tc.done {
				t.Fatalf("done = %v, want %v (%+v)", done, tc.done, got)
			}
			if !done {
				return
			}
			if got.Workers != 4 || got.WorkerNodes != tc.nodes || got.CoLocated != tc.coLocated {
				t.Errorf("workers %d on %d nodes, co-located %v; want 4 on %d, %v", got.Workers, got.WorkerNodes, got.CoLocated, tc.nodes, tc.coLocated)
			}
			if got.Note != tc.note {
				t.Errorf("note = %q\nwant   %q", got.Note, tc.note)
			}
			if len(got.Pods) != 5 || got.Pods[0].Pod != "r1-coordinator-x" || got.Pods[0].Role != RoleCoord {
				t.Errorf("pods = %+v, want the 4 workers and the coordinator by name", got.Pods)
			}
		})
	}
}
