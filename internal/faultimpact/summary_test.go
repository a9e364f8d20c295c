package faultimpact

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
)

// Two faults written out of order (the later first in spec.faults), one
// not injected: each injected one gets its own dip, the other none.
func TestFill(t *testing.T) {
	start := time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC)
	s := &results.Summary{Workload: v1alpha1.WorkloadSpec{ProducerRate: 100}}
	// A warm-up point first: its offset is not the measured phase's.
	s.Series.Points = append(s.Series.Points, results.SeriesPoint{Phase: stats.PhaseWarmup, OffsetSeconds: 0, Seconds: 10, PublishRateMsgPerSec: 100})
	for i := range 30 {
		rate, p99 := 100.0, 5.0
		switch {
		case i == 5: // the first fault: down to 20 %
			rate, p99 = 20, 900
		case i == 20 || i == 21: // the second: down to 50 %
			rate, p99 = 50, 400
		}
		s.Series.Points = append(s.Series.Points, results.SeriesPoint{Phase: stats.PhaseMeasure, Index: i, OffsetSeconds: 10 + float64(i), Seconds: 1,
			PublishRateMsgPerSec: rate, CorrectedLatencyMs: &results.LatencyDetail{Count: 100, P99: p99}})
	}
	at := func(sec float64) *metav1.MicroTime {
		t := metav1.NewMicroTime(start.Add(time.Duration(sec * float64(time.Second))))
		return &t
	}
	fs := []v1alpha1.FaultStatus{
		{Index: 0, Injected: true, InjectedAt: at(20)},
		{Index: 1, Injected: false, Message: "no pod is broker-7"},
		{Index: 2, Injected: true, InjectedAt: at(5), ClearedAt: at(6)},
	}
	got, err := Fill(s, start, fs)
	if err != nil {
		t.Fatal(err)
	}
	if fs[0].Impact != nil {
		t.Error("Fill changed its input")
	}
	if got[1].Impact != nil {
		t.Errorf("a fault not injected got an impact: %+v", got[1].Impact)
	}
	first, second := got[2].Impact, got[0].Impact
	if first == nil || second == nil {
		t.Fatalf("impacts %+v, %+v", first, second)
	}
	if first.LowestRateFraction != 0.2 || second.LowestRateFraction != 0.5 {
		t.Errorf("dips %.2f and %.2f, want 0.20 and 0.50", first.LowestRateFraction, second.LowestRateFraction)
	}
	if first.InjectedSeconds != 5 || first.ClearedSeconds == nil || *first.ClearedSeconds != 6 {
		t.Errorf("first fault's window %v-%v, want 5-6", first.InjectedSeconds, first.ClearedSeconds)
	}
	if first.WorstP99Ms == nil || *first.WorstP99Ms != 900 || first.RecoverySeconds == nil || !second.Recovered {
		t.Errorf("first %+v second %+v", first, second)
	}
	if _, err := Fill(&results.Summary{Workload: v1alpha1.WorkloadSpec{ProducerRate: 100}}, start, fs); err == nil {
		t.Error("no measured interval: want an error")
	}
}
