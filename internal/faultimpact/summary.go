package faultimpact

import (
	"fmt"
	"sort"
	"time"

	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/results"
)

// TargetRate is the publish rate the producers were asked for in the
// measured phase: the workload's producerRate, or the rate the search
// found when it was 0.
func TargetRate(s *results.Summary) float64 {
	if s.Workload.ProducerRate > 0 {
		return float64(s.Workload.ProducerRate)
	}
	if s.RateSearch != nil {
		return s.RateSearch.RateMsgPerSec
	}
	return 0
}

// Fill sets the impact of each injected fault of fs from one repeat's
// summary, whose measured phase started at start (the coordinator's
// clock, the one the faults were scheduled by). A fault not injected
// keeps no impact. It returns a copy; the error says why nothing could
// be computed (no target rate, no measured interval).
//
// The series' offsets count from the measured phase's first interval,
// which starts with the phase (the workers cut an interval as the phase
// changes), so a fault's seconds are the same on both.
func Fill(s *results.Summary, start time.Time, fs []v1alpha1.FaultStatus) ([]v1alpha1.FaultStatus, error) {
	return FillSeries(s.Series, TargetRate(s), s.FailureSettings, start, fs)
}

// FillSeries is Fill on a series, a target rate and the brokers'
// failure settings (local mode has them before its summary is written).
// Each stall is explained by the settings and the fault's own length
// (Explain).
func FillSeries(series results.Series, rate float64, settings []results.BrokerSetting, start time.Time, fs []v1alpha1.FaultStatus) ([]v1alpha1.FaultStatus, error) {
	out := make([]v1alpha1.FaultStatus, len(fs))
	var windows []Window
	var at []int
	for i := range fs {
		out[i] = *fs[i].DeepCopy()
		f := out[i]
		if !f.Injected || f.InjectedAt == nil {
			continue
		}
		w := Window{InjectedSeconds: f.InjectedAt.Sub(start).Seconds()}
		if f.ClearedAt != nil {
			c := f.ClearedAt.Sub(start).Seconds()
			w.ClearedSeconds = &c
		}
		windows = append(windows, w)
		at = append(at, i)
	}
	if len(windows) == 0 {
		return out, nil
	}
	points := FromSeries(series)
	if len(points) == 0 {
		return out, fmt.Errorf("the results hold no interval of the measured phase, so no fault's impact can be computed")
	}
	// Compute takes the faults in the order they came.
	order := make([]int, len(windows))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return windows[order[a]].InjectedSeconds < windows[order[b]].InjectedSeconds })
	sorted := make([]Window, len(windows))
	for k, i := range order {
		sorted[k] = windows[i]
	}
	ims, err := Compute(points, rate, sorted, Options{})
	if err != nil {
		return out, err
	}
	for k, i := range order {
		out[at[i]].Impact = ims[k].Status()
		ExplainStall(&out[at[i]], settings)
	}
	return out, nil
}

// ExplainStall sets f's impact's stall (Explain) from the brokers'
// settings and the fault's own length; an impact without a longest wait
// keeps none.
func ExplainStall(f *v1alpha1.FaultStatus, settings []results.BrokerSetting) {
	if f.Impact == nil || (f.Impact.LongestWaitMs == nil && f.Impact.NotResumedSeconds == nil) {
		return
	}
	cands := Candidates(settings)
	if own := OwnLength(*f); own != nil {
		cands = append(cands, *own)
	}
	if s := f.Impact.NotResumedSeconds; s != nil {
		f.Impact.Stall = ExplainUnfinished(ptr.Deref(f.Impact.LongestWaitMs, 0), *s, cands)
		return
	}
	f.Impact.Stall = Explain(*f.Impact.LongestWaitMs, f.Impact.PreFaultP99Ms, cands)
}
