package strimzi

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
)

// newRun is a managed Kafka run "run-a" in namespace "bench", as the API
// server would store it after defaulting (3 brokers, level 2), changed by
// the given functions.
func newRun(changes ...func(*v1alpha1.BenchmarkRun)) *v1alpha1.BenchmarkRun {
	level := v1alpha1.Level2
	run := &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "run-a", Namespace: "bench"},
		Spec: v1alpha1.BenchmarkRunSpec{
			System:     v1alpha1.SystemKafka,
			Durability: &v1alpha1.DurabilitySpec{Level: &level},
			Cluster:    v1alpha1.ClusterSpec{Managed: &v1alpha1.ManagedCluster{Brokers: 3}},
		},
	}
	for _, c := range changes {
		c(run)
	}
	return run
}

// translate is the run's real durability translation.
func translate(t *testing.T, run *v1alpha1.BenchmarkRun) v1alpha1.EffectiveDurability {
	t.Helper()
	eff, err := durability.Translate(run.Spec.System, *run.Spec.Durability)
	if err != nil {
		t.Fatalf("durability.Translate: %v", err)
	}
	return eff
}

// fromYAML parses an expected object written as YAML into the generic
// form encoding/json produces (numbers are float64).
func fromYAML(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("parsing expected YAML: %v\n%s", err, s)
	}
	return m
}

// generic is obj in the same generic form as fromYAML, so whole objects
// compare regardless of how their numbers are typed.
func generic(t *testing.T, obj any) map[string]any {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatalf("marshalling: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("unmarshalling: %v", err)
	}
	return m
}

// assertObject compares a built object with the expected YAML, whole.
func assertObject(t *testing.T, got any, wantYAML string) {
	t.Helper()
	if diff := cmp.Diff(fromYAML(t, wantYAML), generic(t, got)); diff != "" {
		t.Errorf("object mismatch (-want +got):\n%s", diff)
	}
}

// assertClientSafe checks what the controller-runtime client will do with
// an unstructured object: deep-copy it (panics on any non-JSON Go type,
// such as int or []string) and round-trip it through JSON, which gives
// int64 for integers; an int32 left in the map would not compare equal.
func assertClientSafe(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	cp := u.DeepCopy()
	b, err := cp.MarshalJSON()
	if err != nil {
		t.Fatalf("MarshalJSON: %v", err)
	}
	back := &unstructured.Unstructured{}
	if err := back.UnmarshalJSON(b); err != nil {
		t.Fatalf("UnmarshalJSON: %v", err)
	}
	if !equality.Semantic.DeepEqual(u.Object, back.Object) {
		t.Errorf("object changes in a JSON round trip (non-JSON value types in the map):\n%s", cmp.Diff(u.Object, back.Object))
	}
}

// statusObject decodes a Kafka as client-go would (integers as int64).
func statusObject(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	b, err := yaml.YAMLToJSON([]byte(s))
	if err != nil {
		t.Fatalf("YAMLToJSON: %v", err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		t.Fatalf("UnmarshalJSON: %v", err)
	}
	return u
}
