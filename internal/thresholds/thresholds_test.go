package thresholds

import (
	"encoding/json"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/config/crd"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/significance"
)

func f(v float64) *float64 { return &v }

func run() *results.Summary {
	return &results.Summary{Results: v1alpha1.ResultsSummary{
		PublishRateMsgPerSec: 1000, PublishMBPerSec: 1.02,
		PublishLatencyMs:   v1alpha1.LatencySummary{P50: 2, P99: 12.4, P999: 30},
		CorrectedLatencyMs: &v1alpha1.LatencySummary{P99: 13, P999: 41},
		Lost:               0, Duplicates: 3,
	}}
}

func repeated() *results.Summary {
	s := run()
	s.Repeats = make([]results.Repeat, 6)
	s.Intervals = []results.FigureInterval{
		{Figure: "publish p99 (ms)", Estimate: significance.Estimate{N: 6, Median: 12.4, Low: 10, High: 19, Confidence: 0.969}},
		{Figure: "publish MB/s", Estimate: significance.Estimate{N: 6, Median: 1.02, Low: 0.9, High: 1.1, Confidence: 0.969}},
	}
	return s
}

func TestEvaluate(t *testing.T) {
	cases := []struct {
		name    string
		ths     []v1alpha1.Threshold
		s       *results.Summary
		met     bool
		display string
		says    []string
	}{
		{
			name: "all held",
			ths: []v1alpha1.Threshold{
				{Figure: "publishLatencyMs.p99", Max: f(15)},
				{Figure: "publishRateMsgPerSec", Min: f(900)},
				{Figure: "lost", Max: f(0)},
			},
			s: run(), met: true, display: "met",
			says: []string{"all 3 thresholds met", "publishLatencyMs.p99 12.4 <= max 15", "lost 0 <= max 0"},
		},
		{
			name: "a latency and a count failed, each named with its value",
			ths: []v1alpha1.Threshold{
				{Figure: "correctedLatencyMs.p999", Max: f(40)},
				{Figure: "duplicates", Max: f(0)},
				{Figure: "publishMBPerSec", Min: f(1)},
			},
			s: run(), display: "2 failed",
			says: []string{"2 of 3 thresholds failed", "correctedLatencyMs.p999 41 > max 40", "duplicates 3 > max 0"},
		},
		{
			name: "a figure the run did not measure fails",
			ths:  []v1alpha1.Threshold{{Figure: "endToEndLatencyMs.p99", Max: f(100)}},
			s:    run(), display: "1 failed",
			says: []string{"endToEndLatencyMs.p99: not in the results"},
		},
		{
			name: "on the confidence bound of a repeated run: the median holds, the high end does not",
			ths:  []v1alpha1.Threshold{{Figure: "publishLatencyMs.p99", Max: f(15), OnConfidenceBound: true}},
			s:    repeated(), display: "1 failed",
			says: []string{"publishLatencyMs.p99 19 > max 15 (the high end of its 96.9 % interval over 6 repeats)"},
		},
		{
			name: "on the median of a repeated run",
			ths:  []v1alpha1.Threshold{{Figure: "publishLatencyMs.p99", Max: f(15)}},
			s:    repeated(), met: true, display: "met",
			says: []string{"12.4 <= max 15 (the median of 6 repeats)"},
		},
		{
			name: "a minimum on the low end",
			ths:  []v1alpha1.Threshold{{Figure: "publishMBPerSec", Min: f(0.95), OnConfidenceBound: true}},
			s:    repeated(), display: "1 failed",
			says: []string{"publishMBPerSec 0.9 < min 0.95 (the low end"},
		},
		{
			name: "on the confidence bound of a run not repeated: its one value, said",
			ths:  []v1alpha1.Threshold{{Figure: "publishLatencyMs.p99", Max: f(15), OnConfidenceBound: true}},
			s:    run(), met: true, display: "met",
			says: []string{"the run was not repeated"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := Evaluate(c.ths, c.s)
			if o.Met() != c.met || o.Display() != c.display {
				t.Errorf("met %v, display %q; want %v, %q: %s", o.Met(), o.Display(), c.met, c.display, o.Message())
			}
			for _, w := range c.says {
				if !strings.Contains(o.Message(), w) {
					t.Errorf("message %q lacks %q", o.Message(), w)
				}
			}
		})
	}
	if Evaluate(nil, run()).Met() {
		t.Error("no thresholds: not met, nothing was checked")
	}
}

// Every figure spec.thresholds may name (the CRD's enum) is one
// Evaluate can read.
func TestEveryThresholdFigureIsKnown(t *testing.T) {
	s := run()
	s.Results.EndToEndLatencyMs = &v1alpha1.LatencySummary{}
	for _, fig := range thresholdFigures(t) {
		if c := check(v1alpha1.Threshold{Figure: fig, Max: f(1e9)}, s); c.Missing || !c.Met {
			t.Errorf("figure %q: %+v", fig, c)
		}
	}
}

// thresholdFigures are the enum of spec.thresholds[].figure in the CRD the
// binary embeds.
func thresholdFigures(t *testing.T) []v1alpha1.ThresholdFigure {
	t.Helper()
	raw, err := crd.Bases.ReadFile("bases/streambench.io_benchmarkruns.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var def apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(raw, &def); err != nil {
		t.Fatal(err)
	}
	spec := def.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	enum := spec.Properties["thresholds"].Items.Schema.Properties["figure"].Enum
	if len(enum) < 20 {
		t.Fatalf("the CRD's threshold figures: %d, want the 24 of ThresholdFigure", len(enum))
	}
	var out []v1alpha1.ThresholdFigure
	for _, e := range enum {
		var s string
		if err := json.Unmarshal(e.Raw, &s); err != nil {
			t.Fatal(err)
		}
		out = append(out, v1alpha1.ThresholdFigure(s))
	}
	return out
}
