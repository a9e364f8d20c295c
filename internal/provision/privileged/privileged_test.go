package privileged

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

func TestLabels(t *testing.T) {
	run := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "r1", Namespace: "team-a", UID: "u-1"}}
	l := Labels(run, "fault")
	for k, want := range map[string]string{"streambench.io/run": "r1", LabelRunNamespace: "team-a", LabelRunUID: "u-1", "streambench.io/role": "fault"} {
		if l[k] != want {
			t.Errorf("label %s = %q, want %q", k, l[k], want)
		}
	}
	if sel := Of(run); len(sel) != 1 || sel[LabelRunUID] != "u-1" {
		t.Errorf("Of = %v, want the run's UID alone", sel)
	}
}

// Two runs of one name in two namespaces (or one made again) get Jobs of
// their own names in the operator's namespace.
func TestSuffix(t *testing.T) {
	a := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "r1", Namespace: "team-a", UID: "u-1"}}
	b := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "r1", Namespace: "team-b", UID: "u-2"}}
	if Suffix(a) == Suffix(b) || Suffix(a, "n1") == Suffix(a, "n2") || Suffix(a, "n1") == Suffix(a) {
		t.Errorf("suffixes collide: %s %s %s %s", Suffix(a), Suffix(b), Suffix(a, "n1"), Suffix(a, "n2"))
	}
	if Suffix(a, "n1") != Suffix(a, "n1") || len(Suffix(a)) != 8 {
		t.Errorf("Suffix is not 8 stable hex digits: %s", Suffix(a))
	}
}

func TestAllowed(t *testing.T) {
	for _, tc := range []struct {
		labels map[string]string
		ok     bool
	}{
		{nil, true}, // the cluster's default level
		{map[string]string{LabelPodSecurityEnforce: "privileged"}, true},
		{map[string]string{LabelPodSecurityEnforce: "baseline"}, false},
		{map[string]string{LabelPodSecurityEnforce: "restricted", "pod-security.kubernetes.io/warn": "privileged"}, false},
	} {
		ok, msg := Allowed("streambench-system", tc.labels)
		if ok != tc.ok {
			t.Errorf("%v: allowed %v, want %v", tc.labels, ok, tc.ok)
		}
		if ok {
			continue
		}
		for _, want := range []string{"the operator's namespace streambench-system", "kubectl label namespace streambench-system pod-security.kubernetes.io/enforce=privileged", "a cluster admin"} {
			if !strings.Contains(msg, want) {
				t.Errorf("message %q does not say %q", msg, want)
			}
		}
	}
}
