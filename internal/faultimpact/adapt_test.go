package faultimpact

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
)

func TestFromSeries(t *testing.T) {
	lat := func(p99 float64) *results.LatencyDetail {
		return &results.LatencyDetail{Count: 10, P99: p99, Max: 2 * p99}
	}
	s := results.Series{Stride: 1, Points: []results.SeriesPoint{
		{Phase: stats.PhaseWarmup, OffsetSeconds: 0, Seconds: 10, PublishRateMsgPerSec: 1000, PublishLatencyMs: lat(3)},
		{Phase: stats.PhaseMeasure, OffsetSeconds: 10.5, Seconds: 10, PublishRateMsgPerSec: 990, PublishErrorRateMsgPerSec: 0.25,
			PublishLatencyMs: lat(3), CorrectedLatencyMs: lat(4)},
		// A stalled interval: no acknowledgement, no latency at all.
		{Phase: stats.PhaseMeasure, OffsetSeconds: 20.5, Seconds: 10, PublishErrorRateMsgPerSec: 3,
			PublishLatencyMs: &results.LatencyDetail{}},
		{Phase: stats.PhaseMeasure, OffsetSeconds: 30.5, Seconds: 9.5, PublishRateMsgPerSec: 1200, PublishLatencyMs: lat(5), CorrectedLatencyMs: lat(900)},
		{Phase: "cooldown", OffsetSeconds: 40, Seconds: 10},
	}}
	want := []Point{
		{StartSeconds: 0, Seconds: 10, PublishRate: 990, PublishErrors: 3, P99Ms: ptr.To(3.0), CorrectedP99Ms: ptr.To(4.0), MaxMs: ptr.To(6.0), CorrectedMaxMs: ptr.To(8.0)},
		{StartSeconds: 10, Seconds: 10, PublishErrors: 30},
		{StartSeconds: 20, Seconds: 9.5, PublishRate: 1200, P99Ms: ptr.To(5.0), CorrectedP99Ms: ptr.To(900.0), MaxMs: ptr.To(10.0), CorrectedMaxMs: ptr.To(1800.0)},
	}
	if got := FromSeries(s); !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	if got := FromSeries(results.Series{}); got != nil {
		t.Fatalf("an empty series gives %+v", got)
	}
}

func TestFromOMB(t *testing.T) {
	r := &results.OMBResult{
		PublishRate:         []float64{1000, 0, 990},
		PublishErrorRate:    []float64{0, 2.5, 0.1},
		PublishLatency99pct: []float64{3, 0, 5},
	}
	got, err := FromOMB(r, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []Point{
		{StartSeconds: 0, Seconds: 10, PublishRate: 1000, P99Ms: ptr.To(3.0)},
		{StartSeconds: 10, Seconds: 10, PublishErrors: 25},
		{StartSeconds: 20, Seconds: 10, PublishRate: 990, PublishErrors: 1, P99Ms: ptr.To(5.0)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	// No corrected latency in OMB's lists: the publish p99, said.
	im, err := Compute(got, 1000, []Window{at(10)}, Options{RecoveryIntervals: 1})
	if err != nil {
		t.Fatal(err)
	}
	if im[0].Series != SeriesPublish || !im[0].Recovered || len(im[0].Notes) != 1 || !strings.Contains(im[0].Notes[0], "corrected latency was not recorded") {
		t.Fatalf("got series %s, notes %q", im[0].Series, im[0].Notes)
	}

	for _, bad := range []struct {
		r        *results.OMBResult
		interval float64
		words    string
	}{
		{&results.OMBResult{PublishRate: []float64{1}, PublishErrorRate: []float64{}, PublishLatency99pct: []float64{1}}, 10, "differ in length"},
		{r, 0, "interval length"},
	} {
		if _, err := FromOMB(bad.r, bad.interval); err == nil || !strings.Contains(err.Error(), bad.words) {
			t.Errorf("got %v, want an error saying %q", err, bad.words)
		}
	}
}
