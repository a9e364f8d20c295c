package tenancy

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

func TestGiven(t *testing.T) {
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		consent     Consent
		from        string
		want        bool
	}{
		{"no annotation", nil, AllowFaultsFrom, "tenant-a", false},
		{"listed", map[string]string{string(AllowFaultsFrom): "tenant-a"}, AllowFaultsFrom, "tenant-a", true},
		{"one of several, spaces", map[string]string{string(AllowFaultsFrom): "team-b, tenant-a ,x"}, AllowFaultsFrom, "tenant-a", true},
		{"everyone", map[string]string{string(AllowFaultsFrom): "*"}, AllowFaultsFrom, "tenant-a", true},
		{"a prefix is not a name", map[string]string{string(AllowFaultsFrom): "tenant"}, AllowFaultsFrom, "tenant-a", false},
		{"a longer name is not a name", map[string]string{string(AllowFaultsFrom): "tenant-a-b"}, AllowFaultsFrom, "tenant-a", false},
		{"the other consent", map[string]string{string(AllowRunsFrom): "tenant-a"}, AllowFaultsFrom, "tenant-a", false},
		{"empty value", map[string]string{string(AllowFaultsFrom): ""}, AllowFaultsFrom, "tenant-a", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Given(tc.annotations, tc.consent, tc.from); got != tc.want {
				t.Fatalf("Given(%v, %s, %s) = %v, want %v", tc.annotations, tc.consent, tc.from, got, tc.want)
			}
		})
	}
}

func TestReferences(t *testing.T) {
	fault := []v1alpha1.Fault{{Action: v1alpha1.FaultDeletePod, Target: "broker-0", At: metav1.Duration{}}}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "victim"}}
	for _, tc := range []struct {
		name   string
		spec   v1alpha1.BenchmarkRunSpec
		fields []string // the refs' fields, in order
		ns     []string
	}{
		{name: "managed reaches nothing", spec: v1alpha1.BenchmarkRunSpec{Cluster: v1alpha1.ClusterSpec{Managed: &v1alpha1.ManagedCluster{}}, Faults: fault}},
		{name: "existing, own namespace", spec: v1alpha1.BenchmarkRunSpec{Faults: fault, Cluster: v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{
			BootstrapServers: "k:9092", Faults: &v1alpha1.ExistingClusterFaults{AllowDisruption: true, Namespace: "tenant-a", PodSelector: sel}}}}},
		{name: "faults in another namespace (the issue's attack)", spec: v1alpha1.BenchmarkRunSpec{Faults: fault, Cluster: v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{
			BootstrapServers: "k:9092", Faults: &v1alpha1.ExistingClusterFaults{AllowDisruption: true, Namespace: "victim", PodSelector: sel}}}},
			fields: []string{"spec.cluster.existing.faults.namespace"}, ns: []string{"victim"}},
		{name: "a Strimzi cluster elsewhere, faults on it by its namespace", spec: v1alpha1.BenchmarkRunSpec{Faults: fault, Cluster: v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{
			StrimziCluster: &v1alpha1.StrimziClusterRef{Name: "k", Namespace: "kafka"}, Faults: &v1alpha1.ExistingClusterFaults{AllowDisruption: true}}}},
			fields: []string{"spec.cluster.existing.strimziCluster.namespace", "spec.cluster.existing.strimziCluster.namespace"}, ns: []string{"kafka", "kafka"}},
		{name: "a Strimzi cluster elsewhere, no faults", spec: v1alpha1.BenchmarkRunSpec{Cluster: v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{
			StrimziCluster: &v1alpha1.StrimziClusterRef{Name: "k", Namespace: "kafka"}, Faults: &v1alpha1.ExistingClusterFaults{AllowDisruption: true, Namespace: "victim"}}}},
			fields: []string{"spec.cluster.existing.strimziCluster.namespace"}, ns: []string{"kafka"}},
		{name: "consent to disrupt, but no faults: nothing disrupted", spec: v1alpha1.BenchmarkRunSpec{Cluster: v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{
			BootstrapServers: "k:9092", Faults: &v1alpha1.ExistingClusterFaults{AllowDisruption: true, Namespace: "victim", PodSelector: sel}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refs := References("tenant-a", &tc.spec)
			if len(refs) != len(tc.fields) {
				t.Fatalf("References = %+v, want fields %v", refs, tc.fields)
			}
			for i, r := range refs {
				if r.Field.String() != tc.fields[i] || r.Namespace != tc.ns[i] {
					t.Errorf("ref %d = %s in %s, want %s in %s", i, r.Field, r.Namespace, tc.fields[i], tc.ns[i])
				}
			}
		})
	}
}

// TestRefusal: the refusal names the field, the namespace, the consent
// missing and how its owner gives it.
func TestRefusal(t *testing.T) {
	spec := v1alpha1.BenchmarkRunSpec{Faults: []v1alpha1.Fault{{Action: v1alpha1.FaultDeletePod, Target: "broker-0"}}, Cluster: v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{
		BootstrapServers: "k:9092", Faults: &v1alpha1.ExistingClusterFaults{AllowDisruption: true, Namespace: "victim"}}}}
	msg := Refusal(References("tenant-a", &spec)[0], "tenant-a")
	for _, want := range []string{"spec.cluster.existing.faults.namespace", "namespace victim", "runs of namespace tenant-a", "kubectl annotate namespace victim streambench.io/allow-faults-from=tenant-a", "allowDisruption is the run author's agreement"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q lacks %q", msg, want)
		}
	}
}
