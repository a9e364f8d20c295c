package results

import (
	"errors"
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/stats"
)

func repeatOf(mbs, p99 float64, lost int64, e2e bool) *Summary {
	s := &Summary{Run: "r", System: v1alpha1.SystemKafka, Results: v1alpha1.ResultsSummary{
		PublishMBPerSec:    mbs,
		PublishLatencyMs:   v1alpha1.LatencySummary{P50: p99 / 4, P99: p99, Max: 2 * p99},
		CorrectedLatencyMs: &v1alpha1.LatencySummary{P99: p99 + 1},
		Sent:               100, Acked: 100 - lost, Received: 100 - lost, Lost: lost,
	}}
	if e2e {
		s.Results.EndToEndLatencyMs = &v1alpha1.LatencySummary{P99: p99 + 2}
	}
	return s
}

func TestAggregate(t *testing.T) {
	reps := []*Summary{repeatOf(10, 5, 0, true), repeatOf(12, 9, 1, true), repeatOf(11, 6, 2, false), repeatOf(9, 7, 0, true), repeatOf(13, 8, 0, true), repeatOf(10.5, 30, 0, true)}
	dirs := []string{"repeat-1", "repeat-2", "repeat-3", "repeat-4", "repeat-5", "repeat-6"}
	agg, err := Aggregate(reps, dirs)
	if err != nil {
		t.Fatal(err)
	}
	r := agg.Results
	// Medians of each figure, not of the repeats' order: p99 5 6 7 8 9 30.
	if r.PublishLatencyMs.P99 != 7.5 || r.PublishMBPerSec != 10.75 || r.PublishLatencyMs.Max != 15 {
		t.Errorf("medians: p99 %v (want 7.5), MB/s %v (want 10.75), max %v (want 15)", r.PublishLatencyMs.P99, r.PublishMBPerSec, r.PublishLatencyMs.Max)
	}
	if r.CorrectedLatencyMs == nil || r.CorrectedLatencyMs.P99 != 8.5 {
		t.Errorf("corrected p99: %+v, want 8.5", r.CorrectedLatencyMs)
	}
	// Repeat 3 had no end-to-end latency: no median of the others.
	if r.EndToEndLatencyMs != nil {
		t.Errorf("end-to-end %+v from repeats of which one had none", r.EndToEndLatencyMs)
	}
	if r.Sent != 600 || r.Lost != 3 || r.Acked != 597 {
		t.Errorf("counts are sums: sent %d lost %d acked %d", r.Sent, r.Lost, r.Acked)
	}
	if len(agg.Repeats) != 6 || agg.Repeats[2].Index != 3 || agg.Repeats[2].Dir != "repeat-3" || agg.Repeats[2].Results.Lost != 2 {
		t.Errorf("repeats: %+v", agg.Repeats)
	}
	var p99 *FigureInterval
	for i := range agg.Intervals {
		if agg.Intervals[i].Figure == "publish p99 (ms)" {
			p99 = &agg.Intervals[i]
		}
		if agg.Intervals[i].Figure == "end-to-end p99 (ms)" {
			t.Errorf("an interval of a figure not every repeat has: %+v", agg.Intervals[i])
		}
	}
	if p99 == nil || p99.Median != 7.5 || p99.Low != 5 || p99.High != 30 || p99.N != 6 {
		t.Fatalf("publish p99 interval: %+v, want 7.5 in [5, 30] of 6", p99)
	}
	if vals := agg.RepeatValues(Figures[1]); len(vals) != 6 || vals[1] != 12 {
		t.Errorf("repeat values of %s: %v", Figures[1].Name, vals)
	}
	if vals := reps[0].RepeatValues(Figures[1]); len(vals) != 1 || vals[0] != 10 {
		t.Errorf("a run not repeated gives its one value: %v", vals)
	}
	if _, err := Aggregate(reps[:1], dirs[:1]); !errors.Is(err, ErrOneRepeat) {
		t.Errorf("one repeat: %v", err)
	}
}

// withCurves gives a repeat a measured phase whose publish curve is p99
// times the shape below (and, when e2e, an end-to-end curve 2 ms above).
func withCurves(s *Summary, e2e bool) *Summary {
	p99 := s.Results.PublishLatencyMs.P99
	shape := []CurvePoint{{0, 0.1}, {50, 0.25}, {99, 1}, {99.9, 1.5}, {100, 2}}
	c := &Curves{}
	for _, p := range shape {
		c.PublishLatencyMs = append(c.PublishLatencyMs, CurvePoint{Percentile: p.Percentile, Ms: p.Ms * p99})
		if e2e {
			c.EndToEndLatencyMs = append(c.EndToEndLatencyMs, CurvePoint{Percentile: p.Percentile, Ms: p.Ms*p99 + 2})
		}
	}
	s.Phases = []PhaseSummary{{Phase: stats.PhaseWarmup}, {Phase: stats.PhaseMeasure, Curves: c}}
	return s
}

// TestAggregateCurves: a repeated run's quantile curves are, at each
// percentile, the median over the repeats in its interval; a curve that a
// repeat lacks, or has at other percentiles, is left out.
func TestAggregateCurves(t *testing.T) {
	p99s := []float64{5, 9, 6, 7, 8, 30}
	var reps []*Summary
	var dirs []string
	for i, p := range p99s {
		reps = append(reps, withCurves(repeatOf(10, p, 0, true), i != 2))
		dirs = append(dirs, "repeat-"+string(rune('1'+i)))
	}
	agg, err := Aggregate(reps, dirs)
	if err != nil {
		t.Fatal(err)
	}
	ci := agg.CurveIntervals
	if ci == nil || len(ci.PublishLatencyMs) != 5 {
		t.Fatalf("curve intervals %+v: want the publish curve's 5 points", ci)
	}
	if p := ci.PublishLatencyMs[2]; p.Percentile != 99 || p.Ms != 7.5 || p.Low != 5 || p.High != 30 {
		t.Errorf("publish at the 99th: %+v, want the median 7.5 in [5, 30] (the headline p99's)", p)
	}
	if p := ci.PublishLatencyMs[4]; p.Ms != 15 {
		t.Errorf("publish at the 100th: %+v, want the median of the maxima, 15", p)
	}
	if ci.Confidence < 0.96 || ci.Confidence > 0.97 {
		t.Errorf("confidence %v, want 6 repeats' 96.9 %%", ci.Confidence)
	}
	if len(ci.EndToEndLatencyMs) != 0 || len(ci.CorrectedLatencyMs) != 0 {
		t.Errorf("curves some repeat lacks: end-to-end %v, corrected %v", ci.EndToEndLatencyMs, ci.CorrectedLatencyMs)
	}

	// Another grid of percentiles in one repeat: no curve rather than a
	// median of values at different percentiles.
	reps[1].Phases[1].Curves.PublishLatencyMs[1].Percentile = 75
	agg, err = Aggregate(reps, dirs)
	if err != nil {
		t.Fatal(err)
	}
	if agg.CurveIntervals != nil {
		t.Errorf("curves of different percentiles aggregated: %+v", agg.CurveIntervals)
	}
}
