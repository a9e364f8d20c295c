package suite

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/brokerres"
	"github.com/streambench/streambench-operator/internal/cost"
	"github.com/streambench/streambench-operator/internal/outcome"
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

	html := renderSuite(t, s, map[string]*results.Summary{"m-kafka-l2-lat": kafka, "m-pulsar-l2-lat": pulsar})
	for _, want := range []string{"Suite m", "lat at achieved durability level 2", "m-kafka-l1-lat", "Publish latency, ack − send (ms)", "Publish latency corrected for coordinated omission", "<svg"} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// withSecurity is a copy of s as if its clients had run with sec.
func withSecurity(t *testing.T, s *results.Summary, sec *v1alpha1.SecurityInfo) *results.Summary {
	t.Helper()
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var out results.Summary
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	out.Security = sec
	return &out
}

// A suite measuring the cost of security: plain, TLS and TLS+SCRAM of one
// workload at one level are one table, a row each in plan order, each
// saying its security beside its durability, with no unfair-pair flag for
// what the suite set out to vary.
func TestCompareSecuritiesShareATableWithoutSecurityFlags(t *testing.T) {
	kafka := loadSummary(t, "kafka-ack-all")
	plaintext := &v1alpha1.SecurityInfo{Protocol: "PLAINTEXT"}
	ssl := &v1alpha1.SecurityInfo{Protocol: "SSL", TLSVersion: "TLS 1.3", Verification: "full"}
	scram := &v1alpha1.SecurityInfo{Protocol: "SASL_SSL", Mechanism: "SCRAM-SHA-512", TLSVersion: "TLS 1.3", Verification: "full"}
	l2 := level(2)
	cell := func(name, sec string) v1alpha1.SuiteCell {
		return v1alpha1.SuiteCell{Name: name, System: v1alpha1.SystemKafka, Workload: "lat", Durability: l2, RequestedLevel: 2, Security: sec, Phase: v1alpha1.CellSucceeded}
	}
	s := &v1alpha1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns"}}
	s.Spec.Workloads = []v1alpha1.SuiteWorkload{{Name: "lat"}}
	s.Status.Cells = []v1alpha1.SuiteCell{cell("m-kafka-plain-l2-lat", "plain"), cell("m-kafka-tls-l2-lat", "tls"), cell("m-kafka-tls-scram-l2-lat", "tls-scram")}
	s.Status.Clusters = []v1alpha1.SuiteCluster{{Name: "m-kafka-tls-scram", System: v1alpha1.SystemKafka, Managed: true,
		Security: &v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthScramSHA512}}}
	summaries := map[string]*results.Summary{
		"m-kafka-plain-l2-lat":     withSecurity(t, kafka, plaintext),
		"m-kafka-tls-l2-lat":       withSecurity(t, kafka, ssl),
		"m-kafka-tls-scram-l2-lat": withSecurity(t, kafka, scram),
	}

	// What compare alone says of these runs: every pair differs in security.
	var runs []report.Named
	for _, c := range s.Status.Cells {
		runs = append(runs, report.Named{Name: c.Name, Summary: summaries[c.Name]})
	}
	raw, err := report.Compare(runs)
	if err != nil {
		t.Fatal(err)
	}
	if n := countKind(raw.Flags, report.FlagSecurity); n != 3 {
		t.Fatalf("compare flags %d security pairs, want 3: %v", n, raw.Flags)
	}

	cs, err := Compare([]string{"lat"}, s.Status.Cells, summaries)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 {
		t.Fatalf("%d tables, want one: the settings share the workload's table", len(cs))
	}
	c := cs[0]
	if strings.Join(c.Cells, " ") != "m-kafka-plain-l2-lat m-kafka-tls-l2-lat m-kafka-tls-scram-l2-lat" || strings.Join(c.Securities, " ") != "plain tls tls-scram" {
		t.Errorf("cells %v securities %v", c.Cells, c.Securities)
	}
	if n := countKind(c.Flags, report.FlagSecurity); n != 0 {
		t.Errorf("the suite's table flags security %d times: %v", n, c.Flags)
	}
	for _, want := range []string{
		"Cells (as planned)\n",
		"m-kafka-tls-scram-l2-lat  kafka   l2          tls-scram\n",
		"m-kafka-plain-l2-lat      kafka   l2          plain\n",
		"3 security flags between cells of different settings are left out",
		"Client security", "SASL_SSL · SCRAM-SHA-512 · TLS 1.3",
	} {
		if !strings.Contains(c.Text, want) {
			t.Errorf("table lacks %q:\n%s", want, c.Text)
		}
	}
	if strings.Contains(c.Text, "[security]") {
		t.Errorf("the table flags security:\n%s", c.Text)
	}

	html := renderSuite(t, s, summaries)
	for _, want := range []string{"<th>security</th>", "<td>tls-scram</td>", "security tls-scram", "security flags between cells of different settings are left out"} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if strings.Contains(html, "<strong>security</strong>") {
		t.Error("report.html flags security between the settings")
	}
}

func TestCompareWithoutSecuritiesIsAsBefore(t *testing.T) {
	kafka, pulsar := loadSummary(t, "kafka-ack-all"), loadSummary(t, "pulsar-ack-2")
	cells := []v1alpha1.SuiteCell{
		{Name: "m-kafka-l2-lat", System: v1alpha1.SystemKafka, Workload: "lat", RequestedLevel: 2, Phase: v1alpha1.CellSucceeded},
		{Name: "m-pulsar-l2-lat", System: v1alpha1.SystemPulsar, Workload: "lat", RequestedLevel: 2, Phase: v1alpha1.CellSucceeded},
	}
	cs, err := Compare([]string{"lat"}, cells, map[string]*results.Summary{"m-kafka-l2-lat": kafka, "m-pulsar-l2-lat": pulsar})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].Securities != nil || strings.Contains(cs[0].Text, "Cells (as planned)") {
		t.Errorf("a suite without securities got a security column: %+v\n%s", cs[0].Securities, cs[0].Text)
	}
	if !strings.HasPrefix(cs[0].Text, "== workload lat, achieved durability level 2 ==\nPublish latency") {
		t.Errorf("table starts:\n%s", cs[0].Text[:120])
	}
}

func countKind(flags []report.Flag, kind report.FlagKind) int {
	n := 0
	for _, f := range flags {
		if f.Kind == kind {
			n++
		}
	}
	return n
}

// TestCompareRepeatedCells: the repeats of a cell are one row, their
// median, and two repeated cells get compare's verdict on each figure.
func TestCompareRepeatedCells(t *testing.T) {
	base := map[string]*results.Summary{"m-kafka-l2-lat": loadSummary(t, "kafka-ack-all"), "m-pulsar-l2-lat": loadSummary(t, "pulsar-ack-2")}
	spread := []float64{1, 1.06, 0.97, 1.02, 0.95}
	var cells []v1alpha1.SuiteCell
	summaries := map[string]*results.Summary{}
	for r := 1; r <= len(spread); r++ {
		for _, name := range []string{"m-kafka-l2-lat", "m-pulsar-l2-lat"} {
			sys := v1alpha1.SystemKafka
			if strings.Contains(name, "pulsar") {
				sys = v1alpha1.SystemPulsar
			}
			cell := name + "-r" + string(rune('0'+r))
			cells = append(cells, v1alpha1.SuiteCell{Name: cell, System: sys, Workload: "lat", RequestedLevel: 2, Phase: v1alpha1.CellSucceeded, Repeat: int32(r), RepeatOf: name})
			// A copy of the cell's results with its latencies scaled by
			// this repeat's spread.
			raw, err := json.Marshal(base[name])
			if err != nil {
				t.Fatal(err)
			}
			var s results.Summary
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatal(err)
			}
			l := &s.Results.PublishLatencyMs
			l.P50, l.P99, l.P999 = l.P50*spread[r-1], l.P99*spread[r-1], l.P999*spread[r-1]
			// Each repeat priced as its outcome step prices it, with what
			// its brokers used spread as its latencies are.
			s.BrokerResources = &brokerres.Report{Source: brokerres.SourceProc, Total: v1alpha1.BrokerResources{
				CPUCores: ptr.To(0.5 * spread[r-1]), MemoryGiB: ptr.To(2.0)}}
			s.Cost = cost.Compute(outcome.CostInput(&s), cost.Default(), true)
			summaries[cell] = &s
		}
	}
	// One repeat of Pulsar failed: its row is the other four.
	delete(summaries, "m-pulsar-l2-lat-r3")
	cmps, err := Compare([]string{"lat"}, cells, summaries)
	if err != nil {
		t.Fatal(err)
	}
	if len(cmps) != 1 || strings.Join(cmps[0].Cells, " ") != "m-kafka-l2-lat m-pulsar-l2-lat" {
		t.Fatalf("comparisons %+v: want one table of the two cells, one row each", cmps)
	}
	text := cmps[0].Text
	for _, want := range []string{"B = m-pulsar-l2-lat against A = m-kafka-l2-lat:", "publish p99 (ms): B's is"} {
		if !strings.Contains(text, want) {
			t.Errorf("the table lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "-r1") {
		t.Errorf("a repeat has a row of its own:\n%s", text)
	}
	// Each row's cost, from its repeats' median CPU (0.5 cores).
	var costLine string
	for _, l := range strings.Split(text[strings.Index(text, "Efficiency and cost")+1:], "\n") {
		if strings.HasPrefix(l, "m-kafka-l2-lat ") {
			costLine = l
			break
		}
	}
	kafka := summaries["m-kafka-l2-lat-r1"].Results.PublishMBPerSec
	if want := fmt.Sprintf("%.3g", kafka/0.5); !strings.Contains(costLine, "gcp-n2-us-central1-on-demand") || !strings.Contains(costLine, " "+want+" ") {
		t.Errorf("the Kafka row's cost %q lacks the default model or %s MB/s per core (the repeats' median 0.5 cores):\n%s", costLine, want, text)
	}

	// The suite's files and HTML report: the repeats' results, each row
	// folded from them as in the tables.
	s := &v1alpha1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns"}}
	s.Spec.Workloads = []v1alpha1.SuiteWorkload{{Name: "lat"}}
	s.Status.Cells = cells
	html := renderSuite(t, s, summaries)
	for _, want := range []string{"m-kafka-l2-lat", "m-pulsar-l2-lat", "<svg"} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// renderSuite lays the suite's results ConfigMap out as files and renders
// its HTML report from them, as `streambench report` does.
func renderSuite(t *testing.T, s *v1alpha1.BenchmarkSuite, summaries map[string]*results.Summary) string {
	t.Helper()
	cm, err := BuildConfigMap(s, summaries)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteFiles(cm, dir); err != nil {
		t.Fatal(err)
	}
	path, err := report.RenderSuiteDir(dir)
	if err != nil {
		t.Fatalf("the suite's report: %v", err)
	}
	html, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(html)
}
