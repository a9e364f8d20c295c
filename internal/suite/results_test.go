package suite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/report"
	"github.com/streambench/streambench-operator/internal/results"
)

// The report package's real results (kafka-ack-all, pulsar-ack-2: level 2
// both) stand for two cells of a suite.
func loadSummary(t *testing.T, dir string) *results.Summary {
	t.Helper()
	n, err := report.Load(filepath.Join("..", "report", "testdata", dir))
	if err != nil {
		t.Fatal(err)
	}
	return n.Summary
}

func TestBuildConfigMapTablesAndReport(t *testing.T) {
	kafka, pulsar := loadSummary(t, "kafka-ack-all"), loadSummary(t, "pulsar-ack-2")
	s := &v1alpha1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns"}}
	s.Spec.Workloads = []v1alpha1.SuiteWorkload{{Name: "lat"}}
	s.Status.Cells = []v1alpha1.SuiteCell{
		{Name: "m-pulsar-l2-lat", System: v1alpha1.SystemPulsar, Workload: "lat", RequestedLevel: 2, Phase: v1alpha1.CellSucceeded},
		{Name: "m-kafka-l2-lat", System: v1alpha1.SystemKafka, Workload: "lat", RequestedLevel: 2, Phase: v1alpha1.CellSucceeded},
		{Name: "m-kafka-l1-lat", System: v1alpha1.SystemKafka, Workload: "lat", RequestedLevel: 1, Phase: v1alpha1.CellFailed},
	}
	cm, err := BuildConfigMap(s, map[string]*results.Summary{"m-kafka-l2-lat": kafka, "m-pulsar-l2-lat": pulsar})
	if err != nil {
		t.Fatal(err)
	}
	tables := cm.Data[KeyTables]
	if !strings.Contains(tables, "== workload lat, achieved durability level 2 ==") {
		t.Fatalf("tables:\n%s", tables)
	}
	// Kafka first, then Pulsar, as the study sets them side by side.
	if k, p := strings.Index(tables, "m-kafka-l2-lat"), strings.Index(tables, "m-pulsar-l2-lat"); k < 0 || p < k {
		t.Errorf("Kafka row at %d, Pulsar row at %d:\n%s", k, p, tables)
	}
	if strings.Contains(tables, "m-kafka-l1-lat") {
		t.Errorf("a cell without results has a row:\n%s", tables)
	}
	if _, ok := cm.Data[CellKey("m-kafka-l2-lat")]; !ok {
		t.Errorf("keys %v lack the cell summary", len(cm.Data))
	}

	dir := t.TempDir()
	if err := WriteFiles(cm, dir); err != nil {
		t.Fatal(err)
	}
	path, err := report.RenderSuiteDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Suite m", "lat at achieved durability level 2", "m-kafka-l1-lat", "Publish latency, ack − send (ms)", "Publish latency corrected for coordinated omission", "<svg"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}
