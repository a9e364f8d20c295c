package runqueue

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// run is a managed run in ns "bench" created at t0 plus age seconds.
func run(name string, age int, phase v1alpha1.Phase, selector map[string]string, opts ...func(*v1alpha1.BenchmarkRun)) v1alpha1.BenchmarkRun {
	r := v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: name, CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(age) * time.Second))},
		Spec: v1alpha1.BenchmarkRunSpec{Cluster: v1alpha1.ClusterSpec{Managed: &v1alpha1.ManagedCluster{
			Placement: v1alpha1.Placement{NodeSelector: selector},
		}}},
		Status: v1alpha1.BenchmarkRunStatus{Phase: phase},
	}
	for _, o := range opts {
		o(&r)
	}
	return r
}

func cond(t string, s metav1.ConditionStatus) func(*v1alpha1.BenchmarkRun) {
	return func(r *v1alpha1.BenchmarkRun) {
		r.Status.Conditions = append(r.Status.Conditions, metav1.Condition{Type: t, Status: s, Reason: "R"})
	}
}

func admitted(r *v1alpha1.BenchmarkRun) { cond(v1alpha1.ConditionQueued, metav1.ConditionFalse)(r) }

func existing(r *v1alpha1.BenchmarkRun) {
	r.Spec.Cluster = v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{BootstrapServers: "k:9092"}}
}

func deleting(r *v1alpha1.BenchmarkRun) {
	now := metav1.NewTime(t0.Add(time.Hour))
	r.DeletionTimestamp = &now
}

func policy(p v1alpha1.TeardownPolicy) func(*v1alpha1.BenchmarkRun) {
	return func(r *v1alpha1.BenchmarkRun) { r.Spec.Teardown.Policy = p }
}

func namespace(ns string) func(*v1alpha1.BenchmarkRun) {
	return func(r *v1alpha1.BenchmarkRun) { r.Namespace = ns }
}

var streaming = map[string]string{"node-pool": "streaming"}

func TestAhead(t *testing.T) {
	other := map[string]string{"node-pool": "other"}
	noNodes := Nodes{}
	cases := []struct {
		name   string
		run    v1alpha1.BenchmarkRun
		others []v1alpha1.BenchmarkRun
		// want are the runs waited for, in order; wantKept the finished
		// runs noted as keeping their brokers.
		want, wantKept []string
		// wantMsg is part of the message.
		wantMsg string
	}{
		{
			name:   "an existing cluster's run never waits",
			run:    run("me", 10, v1alpha1.PhasePending, streaming, existing),
			others: []v1alpha1.BenchmarkRun{run("a", 0, v1alpha1.PhaseRunning, streaming)},
		},
		{
			name:   "existing cluster runs hold no nodes",
			run:    run("me", 10, v1alpha1.PhasePending, streaming),
			others: []v1alpha1.BenchmarkRun{run("a", 0, v1alpha1.PhaseRunning, streaming, existing)},
		},
		{
			name:    "waits for an earlier run on the same pool that is provisioning",
			run:     run("me", 10, v1alpha1.PhasePending, streaming),
			others:  []v1alpha1.BenchmarkRun{run("a", 0, v1alpha1.PhaseProvisioning, streaming)},
			want:    []string{"bench/a"},
			wantMsg: "waiting for run bench/a (Provisioning on the same nodes: node-pool=streaming)",
		},
		{
			name:   "a disjoint pool does not wait",
			run:    run("me", 10, v1alpha1.PhasePending, streaming),
			others: []v1alpha1.BenchmarkRun{run("a", 0, v1alpha1.PhaseRunning, other)},
		},
		{
			name:    "waits for an earlier run that is queued itself, in creation order",
			run:     run("me", 10, v1alpha1.PhaseQueued, streaming),
			others:  []v1alpha1.BenchmarkRun{run("b", 5, v1alpha1.PhaseQueued, streaming), run("a", 0, v1alpha1.PhaseRunning, streaming, admitted), run("c", 20, v1alpha1.PhaseQueued, streaming)},
			want:    []string{"bench/a", "bench/b"},
			wantMsg: "waiting for run bench/a (Running on the same nodes: node-pool=streaming); also ahead of it: bench/b",
		},
		{
			name:    "the first in the queue waits for a run not looked at yet only when it is earlier",
			run:     run("me", 10, v1alpha1.PhasePending, streaming),
			others:  []v1alpha1.BenchmarkRun{run("a", 0, "", streaming), run("z", 30, "", streaming)},
			want:    []string{"bench/a"},
			wantMsg: "created earlier, new on the same nodes",
		},
		{
			name:   "a later run that left the queue holds the nodes",
			run:    run("me", 10, v1alpha1.PhasePending, streaming),
			others: []v1alpha1.BenchmarkRun{run("late", 30, v1alpha1.PhasePending, streaming, admitted)},
			want:   []string{"bench/late"},
		},
		{
			name:   "same second: namespace, then name order",
			run:    run("b", 0, v1alpha1.PhasePending, streaming),
			others: []v1alpha1.BenchmarkRun{run("a", 0, v1alpha1.PhasePending, streaming), run("c", 0, v1alpha1.PhasePending, streaming), run("z", 0, "", streaming, namespace("aaa"))},
			want:   []string{"aaa/z", "bench/a"},
		},
		{
			name:    "a finished run whose teardown is not done holds the nodes",
			run:     run("me", 10, v1alpha1.PhasePending, streaming),
			others:  []v1alpha1.BenchmarkRun{run("a", 0, v1alpha1.PhaseSucceeded, streaming, policy(v1alpha1.TeardownAlways))},
			want:    []string{"bench/a"},
			wantMsg: "Succeeded, being torn down",
		},
		{
			name:   "a finished run that is torn down does not",
			run:    run("me", 10, v1alpha1.PhasePending, streaming),
			others: []v1alpha1.BenchmarkRun{run("a", 0, v1alpha1.PhaseFailed, streaming, policy(v1alpha1.TeardownAlways), cond(v1alpha1.ConditionTornDown, metav1.ConditionTrue))},
		},
		{
			name:     "a failed run that keeps its brokers is noted, not waited for",
			run:      run("me", 10, v1alpha1.PhasePending, streaming),
			others:   []v1alpha1.BenchmarkRun{run("a", 0, v1alpha1.PhaseFailed, streaming, policy(v1alpha1.TeardownOnSuccess)), run("n", 1, v1alpha1.PhaseSucceeded, streaming, policy(v1alpha1.TeardownNever))},
			wantKept: []string{"bench/a", "bench/n"},
			wantMsg:  "finished run(s) bench/a, bench/n keep their brokers on the same nodes",
		},
		{
			name:    "a run being deleted that had left the queue holds the nodes until it is gone",
			run:     run("me", 10, v1alpha1.PhasePending, streaming),
			others:  []v1alpha1.BenchmarkRun{run("a", 0, v1alpha1.PhaseRunning, streaming, deleting)},
			want:    []string{"bench/a"},
			wantMsg: "being deleted",
		},
		{
			name:   "a queued run being deleted holds nothing",
			run:    run("me", 10, v1alpha1.PhaseQueued, streaming),
			others: []v1alpha1.BenchmarkRun{run("a", 0, v1alpha1.PhaseQueued, streaming, deleting)},
		},
		{
			name:   "an unpinned run does not queue",
			run:    run("me", 10, v1alpha1.PhasePending, nil),
			others: []v1alpha1.BenchmarkRun{run("a", 0, v1alpha1.PhaseRunning, streaming), run("b", 0, v1alpha1.PhaseRunning, nil)},
		},
		{
			name:   "nor is it waited for",
			run:    run("me", 10, v1alpha1.PhasePending, streaming),
			others: []v1alpha1.BenchmarkRun{run("a", 0, v1alpha1.PhaseRunning, nil)},
		},
		{
			name: "required node affinity pins too",
			run: run("me", 10, v1alpha1.PhasePending, nil, func(r *v1alpha1.BenchmarkRun) {
				r.Spec.Cluster.Managed.Placement.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "node-pool", Operator: corev1.NodeSelectorOpIn, Values: []string{"streaming"}}}}},
				}}}
			}),
			others:  []v1alpha1.BenchmarkRun{run("a", 0, v1alpha1.PhaseRunning, streaming)},
			want:    []string{"bench/a"},
			wantMsg: "Running on the same nodes: node-pool=streaming",
		},
		{
			name:   "the run itself is skipped",
			run:    run("me", 10, v1alpha1.PhasePending, streaming),
			others: []v1alpha1.BenchmarkRun{run("me", 10, v1alpha1.PhasePending, streaming)},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := Ahead(&tc.run, tc.others, noNodes)
			var got, kept []string
			for _, h := range w.Ahead {
				got = append(got, h.Run.String())
			}
			for _, k := range w.Kept {
				kept = append(kept, k.String())
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("waits for %v, want %v (%s)", got, tc.want, w.Message())
			}
			if strings.Join(kept, " ") != strings.Join(tc.wantKept, " ") {
				t.Errorf("kept %v, want %v", kept, tc.wantKept)
			}
			if w.Waiting() != (len(tc.want) > 0) {
				t.Errorf("Waiting() = %v with %v ahead", w.Waiting(), got)
			}
			if !strings.Contains(w.Message(), tc.wantMsg) {
				t.Errorf("message %q lacks %q", w.Message(), tc.wantMsg)
			}
		})
	}
}

func node(name string, labels map[string]string, taints ...corev1.Taint) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
}

func TestOverlap(t *testing.T) {
	dedicated := corev1.Taint{Key: "dedicated", Value: "streaming", Effect: corev1.TaintEffectNoSchedule}
	tolerate := []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "streaming", Effect: corev1.TaintEffectNoSchedule}}
	pool := func(sel map[string]string, tol []corev1.Toleration) v1alpha1.Placement {
		return v1alpha1.Placement{NodeSelector: sel, Tolerations: tol}
	}
	nvmeNodes := Nodes{Known: true, Items: []corev1.Node{
		node("n1", map[string]string{"node-pool": "streaming", "disk": "nvme"}, dedicated),
		node("n2", map[string]string{"node-pool": "streaming"}, dedicated),
		node("c1", map[string]string{"node-pool": "clients"}),
	}}
	inZone := v1alpha1.Placement{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"nvme"}}}}},
	}}}, Tolerations: tolerate}
	cases := []struct {
		name  string
		a, b  v1alpha1.Placement
		nodes Nodes
		want  bool
		where string
	}{
		// Without the Nodes: selectors alone.
		{"equal selectors", pool(streaming, nil), pool(streaming, nil), Nodes{}, true, "the same nodes: node-pool=streaming"},
		{"one a subset of the other", pool(streaming, nil), pool(map[string]string{"node-pool": "streaming", "disk": "nvme"}, nil), Nodes{}, true, "disk=nvme,node-pool=streaming"},
		{"a key with different values", pool(streaming, nil), pool(map[string]string{"node-pool": "b"}, nil), Nodes{}, false, ""},
		{"keys of their own may meet on one node", pool(map[string]string{"a": "1"}, nil), pool(map[string]string{"b": "2"}, nil), Nodes{}, true, "a=1,b=2"},
		{"no selectors at all", pool(nil, nil), pool(nil, nil), Nodes{}, true, "any node"},
		// With the Nodes: exact.
		{"same pool, taint tolerated", pool(streaming, tolerate), pool(streaming, tolerate), nvmeNodes, true, "the same nodes: n1, n2"},
		{"keys of their own on different nodes", pool(map[string]string{"disk": "nvme"}, tolerate), pool(map[string]string{"node-pool": "clients"}, nil), nvmeNodes, false, ""},
		{"an untolerated taint keeps a run off the pool", pool(nil, nil), pool(streaming, tolerate), nvmeNodes, false, ""},
		{"required node affinity", inZone, pool(streaming, tolerate), nvmeNodes, true, "the same nodes: n1"},
		{"a cluster without nodes has nothing to share", pool(streaming, nil), pool(streaming, nil), Nodes{Known: true}, false, ""},
		{"a NotReady node still counts", pool(streaming, nil), pool(streaming, nil), Nodes{Known: true, Items: []corev1.Node{
			node("n1", streaming, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute}, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}),
		}}, true, "the same nodes: n1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, where := Overlap(tc.a, tc.b, tc.nodes)
			if got != tc.want || !strings.Contains(where, tc.where) {
				t.Errorf("Overlap = %v, %q; want %v, %q", got, where, tc.want, tc.where)
			}
			if back, _ := Overlap(tc.b, tc.a, tc.nodes); back != got {
				t.Errorf("Overlap is not symmetric: %v one way, %v the other", got, back)
			}
		})
	}
}

// TestAheadUsesNodes: with the Nodes known, runs whose selectors differ
// in no key but whose pools are apart (a taint, a label only one has) do
// not queue, and runs with different selectors that meet on a node do.
func TestAheadUsesNodes(t *testing.T) {
	nodes := Nodes{Known: true, Items: []corev1.Node{node("n1", map[string]string{"node-pool": "streaming", "rack": "r1"})}}
	me := run("me", 10, v1alpha1.PhasePending, map[string]string{"rack": "r1"})
	w := Ahead(&me, []v1alpha1.BenchmarkRun{run("a", 0, v1alpha1.PhaseRunning, streaming)}, nodes)
	if !w.Waiting() || !strings.Contains(w.Message(), "the same nodes: n1") {
		t.Errorf("want a wait on n1, got %q", w.Message())
	}
	me = run("me", 10, v1alpha1.PhasePending, map[string]string{"rack": "r2"})
	if w := Ahead(&me, []v1alpha1.BenchmarkRun{run("a", 0, v1alpha1.PhaseRunning, streaming)}, nodes); w.Waiting() {
		t.Errorf("rack r2 has no node; want no wait, got %q", w.Message())
	}
}

func TestAdmitted(t *testing.T) {
	cases := []struct {
		run  v1alpha1.BenchmarkRun
		want bool
	}{
		{run("a", 0, "", nil), false},
		{run("a", 0, v1alpha1.PhasePending, nil), false},
		{run("a", 0, v1alpha1.PhaseQueued, nil, cond(v1alpha1.ConditionQueued, metav1.ConditionTrue)), false},
		{run("a", 0, v1alpha1.PhasePending, nil, admitted), true},
		{run("a", 0, v1alpha1.PhaseQueued, nil, admitted), true},
		// A run from before the queue, or one past it.
		{run("a", 0, v1alpha1.PhaseProvisioning, nil), true},
		{run("a", 0, v1alpha1.PhaseSucceeded, nil), true},
	}
	for _, tc := range cases {
		if got := Admitted(&tc.run); got != tc.want {
			t.Errorf("Admitted(phase %q, conditions %v) = %v, want %v", tc.run.Status.Phase, tc.run.Status.Conditions, got, tc.want)
		}
	}
}
