package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/cost"
)

// costOf is what the outcome step computes for a summary with the test's
// broker resources: 10 MB/s produced and consumed on one machine, three
// copies, the default prices.
func costOf(m cost.PriceModel, isDefault bool) *cost.Report {
	return cost.Compute(cost.Input{System: v1alpha1.SystemKafka, PublishMBPerSec: 10, ConsumeMBPerSec: 10,
		Resources: brokerResReport(), Replicas: 3, OneMachine: true}, m, isDefault)
}

// The report's cost card: each figure with its formula, what was not
// measured said as such, and the projection labelled with its
// assumption and flags. By hand at the default prices: compute used
// 0.75 × 0.031611 + 1.25 × 0.004237 = 0.0290; storage 10 MB/s × 3600 /
// 2^30 × 24 h × 3 copies × 0.17 / 730 = 0.5622; between zones (20 MB/s
// replication modeled + 20 MB/s clients) × 2/3 × 3600 / 2^30 × 0.01 =
// 0.8941; total 1.485 an hour, 41.26 per TB (0.036 TB an hour).
func TestRenderCost(t *testing.T) {
	s := studyRuns()[2].Summary
	s.BrokerResources = brokerResReport()
	s.Cost = costOf(cost.Default(), true)
	var buf bytes.Buffer
	if err := Render(&buf, s, nil); err != nil {
		t.Fatal(err)
	}
	p := parsePage(t, buf.Bytes())
	for name, want := range map[string]string{
		"per broker core used":      "13.3|MB/s per core|10 MB/s produced ÷ 0.75 broker cores used|proc",
		"per broker core requested": "–|MB/s per core|broker cores requested: local processes request nothing|",
		"total":                     "1.485|USD per hour",
		"per TB produced":           "41.26|USD per TB produced",
	} {
		if got := strings.Join(p.row(t, "Efficiency and cost", name)[1:], "|"); !strings.HasPrefix(got, want) {
			t.Errorf("cost row %q: %q, want it to start %q", name, got, want)
		}
	}
	for _, want := range []string{"the default list prices", "gcp-n2-us-central1-on-demand", "Projection to 5000 MB/s (a projection, not a measurement)",
		"Assumed: linear", "one machine hosted every broker", "500 times the measured rate"} {
		if !strings.Contains(p.text, want) {
			t.Errorf("the cost card lacks %q", want)
		}
	}
}

// compare sets the runs' costs side by side and warns when they were
// priced by different models.
func TestCompareCost(t *testing.T) {
	runs := studyRuns()
	runs[1].Summary.Cost = costOf(cost.Default(), true)
	runs[2].Summary.BrokerResources = brokerResReport()
	runs[2].Summary.Cost = costOf(cost.Default(), true)
	tb, err := Compare(runs)
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Cost) != len(runs) || tb.Cost[0][1] != "–" {
		t.Fatalf("cost rows %q, want one per run, – for a run without a cost", tb.Cost)
	}
	if got := strings.Join(tb.Cost[2], "|"); got != "kafka-ack-1|gcp-n2-us-central1-on-demand (USD)|proc|13.3|1.485|41.26|742.6 at 5000 MB/s" {
		t.Errorf("kafka-ack-1 cost row %q", got)
	}
	// runs[1] has a cost but no broker resources of its own: measured
	// differently, a flag of the pair.
	costFlags := func(tb Table) (out []string) {
		for _, f := range tb.Flags {
			if f.Kind == FlagCost {
				out = append(out, f.String())
			}
		}
		return out
	}
	if got := costFlags(tb); len(got) != 1 || !strings.Contains(got[0], "resources measured differently (not measured vs proc)") {
		t.Errorf("cost flags %q, want one: the pair's resources measured differently", got)
	}
	other := cost.Default()
	other.Name = "mine"
	runs[1].Summary.Cost = costOf(other, false)
	tb, _ = Compare(runs)
	if got := costFlags(tb); len(got) != 1 || !strings.Contains(got[0], "[cost] pulsar-ack-2 vs kafka-ack-1: priced by different models (mine in USD vs gcp-n2-us-central1-on-demand in USD)") {
		t.Errorf("cost flags %q, want one: priced by different models", got)
	}
	if !strings.Contains(tb.Text(), "Efficiency and cost") {
		t.Errorf("compare's text lacks the cost grid")
	}
}
