package v1alpha1

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRefreshDisplay(t *testing.T) {
	fsync := 3.14159
	s := BenchmarkRunStatus{
		Results: &ResultsSummary{
			PublishMBPerSec:    4.0957464299870745,
			PublishLatencyMs:   LatencySummary{P99: 12.345},
			CorrectedLatencyMs: &LatencySummary{P99: 250.004},
			EndToEndLatencyMs:  &LatencySummary{P99: 0.004},
		},
		Testbed: &Testbed{SlowestFsyncP99Ms: &fsync},
	}
	s.RefreshDisplay()
	want := StatusDisplay{PublishMBPerSec: "4.10", PublishP99Ms: "12.35", CorrectedP99Ms: "250.00", EndToEndP99Ms: "0.00", FsyncP99Ms: "3.14"}
	if s.Display == nil || *s.Display != want {
		t.Fatalf("display = %+v, want %+v", s.Display, want)
	}
	// The full values stay as they were.
	if s.Results.PublishMBPerSec != 4.0957464299870745 {
		t.Fatalf("results changed: %v", s.Results.PublishMBPerSec)
	}
}

func TestRefreshDisplayPartial(t *testing.T) {
	var s BenchmarkRunStatus
	s.RefreshDisplay()
	if s.Display != nil {
		t.Fatalf("display without figures = %+v, want nil", s.Display)
	}
	fsync := 0.5
	s.Testbed = &Testbed{SlowestFsyncP99Ms: &fsync}
	s.RefreshDisplay()
	if s.Display == nil || *s.Display != (StatusDisplay{FsyncP99Ms: "0.50"}) {
		t.Fatalf("display with testbed only = %+v", s.Display)
	}
	// A run without end-to-end latency (no consumers) leaves the column empty.
	s.Results = &ResultsSummary{PublishMBPerSec: 100, PublishLatencyMs: LatencySummary{P99: 2}}
	s.RefreshDisplay()
	if want := (StatusDisplay{PublishMBPerSec: "100.00", PublishP99Ms: "2.00", FsyncP99Ms: "0.50"}); *s.Display != want {
		t.Fatalf("display = %+v, want %+v", *s.Display, want)
	}
}

// The THRESHOLDS column follows condition ThresholdsMet, and stays empty
// for a run without thresholds.
func TestRefreshDisplayThresholds(t *testing.T) {
	s := BenchmarkRunStatus{Results: &ResultsSummary{PublishMBPerSec: 1}}
	for _, c := range []struct {
		status metav1.ConditionStatus
		want   string
	}{{"", ""}, {metav1.ConditionFalse, "failed"}, {metav1.ConditionTrue, "met"}} {
		if c.status != "" {
			meta.SetStatusCondition(&s.Conditions, metav1.Condition{Type: ConditionThresholdsMet, Status: c.status, Reason: "R"})
		}
		s.RefreshDisplay()
		if s.Display.Thresholds != c.want {
			t.Errorf("condition %q: display %q, want %q", c.status, s.Display.Thresholds, c.want)
		}
	}
}

// A repeated run's p99 columns carry the interval of the median; a figure
// without one (or with a single repeat behind it) shows the median alone.
func TestRefreshDisplayRepeated(t *testing.T) {
	s := BenchmarkRunStatus{
		Results: &ResultsSummary{
			PublishMBPerSec:    2.048,
			PublishLatencyMs:   LatencySummary{P99: 6.003},
			CorrectedLatencyMs: &LatencySummary{P99: 7},
			EndToEndLatencyMs:  &LatencySummary{P99: 8},
		},
		Intervals: []FigureInterval{
			{Figure: "publishLatencyMs.p99", N: 5, Median: 6.003, Low: 5.118, High: 7.2, Confidence: 0.9375},
			{Figure: "endToEndLatencyMs.p99", N: 1, Median: 8, Low: 8, High: 8},
			{Figure: "publishMBPerSec", N: 5, Median: 2.048, Low: 2.04, High: 2.05},
		},
	}
	s.RefreshDisplay()
	want := StatusDisplay{PublishMBPerSec: "2.05", PublishP99Ms: "6.00 (5.12-7.20)", CorrectedP99Ms: "7.00", EndToEndP99Ms: "8.00"}
	if s.Display == nil || *s.Display != want {
		t.Fatalf("display = %+v, want %+v", s.Display, want)
	}
}

// The FAULTS column: how many were injected, then the worst dip and the
// longest recovery over those read, or "not back".
func TestFaultsDisplay(t *testing.T) {
	secs := func(v float64) *float64 { return &v }
	read := func(low float64, rec, stable *float64, ok bool) FaultStatus {
		return FaultStatus{Injected: true, Impact: &FaultImpact{LowestRateFraction: low, RecoverySeconds: rec, StableRecoverySeconds: stable, Recovered: ok}}
	}
	for _, tc := range []struct {
		name string
		fs   []FaultStatus
		want string
	}{
		{"none", nil, ""},
		{"planned, not yet injected", []FaultStatus{{}, {}}, "0/2 injected"},
		{"one injected, not read yet", []FaultStatus{{Injected: true}, {}}, "1/2 injected"},
		{"read: the worst dip, the longest stable recovery", []FaultStatus{read(0.4, secs(6), nil, true), read(0, secs(8), secs(14), true)}, "2/2 injected; lowest 0 %; back after 14 s"},
		{"one not back", []FaultStatus{read(0.5, secs(6), nil, true), read(0.9, nil, nil, false)}, "2/2 injected; lowest 50 %; not back"},
		{"a fault not injected beside one read", []FaultStatus{read(0.25, secs(0), nil, true), {Message: "no leader"}}, "1/2 injected; lowest 25 %; back after 0 s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := BenchmarkRunStatus{Faults: tc.fs}
			s.RefreshDisplay()
			got := ""
			if s.Display != nil {
				got = s.Display.Faults
			}
			if got != tc.want {
				t.Errorf("faults column %q, want %q", got, tc.want)
			}
		})
	}
}
