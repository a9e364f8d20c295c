package nodefit

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

func TestMatches(t *testing.T) {
	streaming := corev1.Taint{Key: "dedicated", Value: "streaming", Effect: corev1.TaintEffectNoSchedule}
	notReady := corev1.Taint{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoExecute}
	node := func(labels map[string]string, taints ...corev1.Taint) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
	}
	pool := map[string]string{"node-pool": "streaming"}
	tolerate := []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "streaming", Effect: corev1.TaintEffectNoSchedule}}
	for _, tc := range []struct {
		name  string
		p     v1alpha1.Placement
		n     *corev1.Node
		which Taints
		want  bool
	}{
		{"no placement, plain node", v1alpha1.Placement{}, node(nil), AllTaints, true},
		{"selector matches", v1alpha1.Placement{NodeSelector: pool}, node(pool), AllTaints, true},
		{"selector misses", v1alpha1.Placement{NodeSelector: pool}, node(map[string]string{"node-pool": "clients"}), AllTaints, false},
		{"taint not tolerated", v1alpha1.Placement{NodeSelector: pool}, node(pool, streaming), AllTaints, false},
		{"taint tolerated", v1alpha1.Placement{NodeSelector: pool, Tolerations: tolerate}, node(pool, streaming), AllTaints, true},
		{"not-ready counts now", v1alpha1.Placement{}, node(nil, notReady), AllTaints, false},
		{"not-ready passes for a lasting fit", v1alpha1.Placement{}, node(nil, notReady), LastingTaints, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Matches(tc.p, tc.n, tc.which); got != tc.want {
				t.Errorf("Matches = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestWords(t *testing.T) {
	if got := SelectorText(map[string]string{"b": "2", "a": "1"}); got != "a=1,b=2" {
		t.Errorf("SelectorText = %q", got)
	}
	if got := Names([]string{"a", "b", "c", "d", "e", "f", "g"}); got != "a, b, c, d, e and 2 more" {
		t.Errorf("Names = %q", got)
	}
	if got := Names([]string{"a", "b"}); got != "a, b" {
		t.Errorf("Names = %q", got)
	}
}
