package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/report"
	"github.com/streambench/streambench-operator/internal/results"
)

// A cluster run's faults are in its status, not in the coordinator's
// summary.json: report writes them beside it, each repeat's into its own
// directory, and the reports show them.
func TestClusterRunFaultsReachTheReports(t *testing.T) {
	cm, _, err := results.BuildRepeatedConfigMap([]results.Input{repeatInput(2), repeatInput(3)})
	if err != nil {
		t.Fatal(err)
	}
	cm.Name, cm.Namespace = "rep-results", "bench"
	faults := []v1alpha1.FaultStatus{
		{Index: 0, Repeat: 1, Action: v1alpha1.FaultDeletePod, Target: "broker-1", Injected: true},
		{Index: 0, Repeat: 2, Action: v1alpha1.FaultDeletePod, Target: "broker-1", Message: "pod kafka-broker-1 not found"},
	}
	run := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "rep", Namespace: "bench"},
		Status: v1alpha1.BenchmarkRunStatus{ResultsRef: "rep-results", Faults: faults}}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, v1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(run, cm).Build()

	got, gotFaults, err := fetchResults(context.Background(), c, "bench", "rep")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "rep-results" || len(gotFaults) != 2 {
		t.Fatalf("fetchResults: ConfigMap %s and %d faults, want rep-results and the status' 2", got.Name, len(gotFaults))
	}
	dir := t.TempDir()
	if err := writeConfigMapFiles(got, dir, gotFaults); err != nil {
		t.Fatal(err)
	}
	for d, want := range map[string][]string{".": {"#0, repeat 1", "#0, repeat 2"}, "repeat-1": {"#0, repeat 1"}, "repeat-2": {"#0, repeat 2"}} {
		n, err := report.Load(filepath.Join(dir, d))
		if err != nil {
			t.Fatal(err)
		}
		if len(n.Summary.Faults) != len(want) {
			t.Errorf("%s: %d faults, want %d", d, len(n.Summary.Faults), len(want))
		}
		if _, err := report.RenderDir(filepath.Join(dir, d)); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, d, report.FileName))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s's report lacks the fault %q", d, w)
			}
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "repeat-1", report.FileName)); strings.Contains(string(b), "not found") {
		t.Error("repeat 1's report shows repeat 2's fault")
	}
}
