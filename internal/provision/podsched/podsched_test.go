package podsched

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestUnschedulable(t *testing.T) {
	pod := func(name string, conds ...corev1.PodCondition) corev1.Pod {
		p := corev1.Pod{}
		p.Name = name
		p.Labels = map[string]string{"component": "bookie"}
		p.Status.Conditions = conds
		return p
	}
	unschedulable := func(msg string) corev1.PodCondition {
		return corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: msg}
	}
	antiAffinity := "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules."
	for _, tc := range []struct {
		name     string
		pods     []corev1.Pod
		want     []string // pod names, in order
		wantList string
	}{
		{name: "none", pods: nil},
		{name: "placed, or not tried yet", pods: []corev1.Pod{
			pod("b-0", corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}),
			pod("b-1"),
			// Not the scheduler's verdict: a gated pod waits for its gate.
			pod("b-2", corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated}),
		}},
		{name: "two stuck, named in order", pods: []corev1.Pod{
			pod("b-3", unschedulable(antiAffinity)),
			pod("b-0", corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}),
			pod("b-2", unschedulable("0/3 nodes are available: 3 Insufficient memory.")),
		}, want: []string{"b-2", "b-3"}, wantList: "b-2: 0/3 nodes are available: 3 Insufficient memory.; b-3: " + antiAffinity},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Unschedulable(tc.pods)
			var names []string
			for _, s := range got {
				names = append(names, s.Pod)
				if s.Labels["component"] != "bookie" {
					t.Errorf("%s: labels %v, want the pod's", s.Pod, s.Labels)
				}
			}
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("pods (-want +got):\n%s", diff)
			}
			if l := List(got); l != tc.wantList {
				t.Errorf("List = %q, want %q", l, tc.wantList)
			}
		})
	}
}
