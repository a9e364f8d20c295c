package v1alpha1

import (
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RefreshDisplay derives status.display from status.results and
// status.testbed. The controller calls it before every status write, so the
// rounded figures can never disagree with the full ones beside them.
func (s *BenchmarkRunStatus) RefreshDisplay() {
	var d StatusDisplay
	if r := s.Results; r != nil {
		d.PublishMBPerSec = figure(r.PublishMBPerSec)
		d.PublishP99Ms = s.withInterval("publishLatencyMs.p99", r.PublishLatencyMs.P99)
		if r.CorrectedLatencyMs != nil {
			d.CorrectedP99Ms = s.withInterval("correctedLatencyMs.p99", r.CorrectedLatencyMs.P99)
		}
		if r.EndToEndLatencyMs != nil {
			d.EndToEndP99Ms = s.withInterval("endToEndLatencyMs.p99", r.EndToEndLatencyMs.P99)
		}
	}
	if tb := s.Testbed; tb != nil && tb.SlowestFsyncP99Ms != nil {
		d.FsyncP99Ms = figure(*tb.SlowestFsyncP99Ms)
	}
	if c := meta.FindStatusCondition(s.Conditions, ConditionThresholdsMet); c != nil {
		d.Thresholds = map[metav1.ConditionStatus]string{metav1.ConditionTrue: "met", metav1.ConditionFalse: "failed"}[c.Status]
	}
	d.Faults = faultsDisplay(s.Faults)
	if d == (StatusDisplay{}) {
		s.Display = nil
		return
	}
	s.Display = &d
}

// withInterval is a figure of status.results as kubectl get shows it,
// followed for a repeated run by its interval, "6.00 (5.12-7.20)": the
// median alone would read as a measurement as sure as a single run's.
func (s *BenchmarkRunStatus) withInterval(key string, v float64) string {
	for _, iv := range s.Intervals {
		if iv.Figure == key && iv.N > 1 {
			return figure(v) + " (" + figure(iv.Low) + "-" + figure(iv.High) + ")"
		}
	}
	return figure(v)
}

// figure is a value as kubectl get shows it: two decimals, enough to read
// a throughput or a latency in ms, where full float64 precision is noise.
func figure(v float64) string {
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// faultsDisplay is status.faults in a column: how many of them were
// injected, and once their impact is read, the lowest interval's rate
// against the target over all of them and the longest time to recover,
// or "not back" when one never recovered: "2/2 injected; lowest 0 %; back
// after 12 s". Empty for a run without faults.
func faultsDisplay(fs []FaultStatus) string {
	if len(fs) == 0 {
		return ""
	}
	injected, read, back := 0, 0, true
	lowest, longest := 1.0, 0.0
	for _, f := range fs {
		if f.Injected {
			injected++
		}
		im := f.Impact
		if im == nil {
			continue
		}
		read++
		lowest = min(lowest, im.LowestRateFraction)
		switch {
		case im.RecoverySeconds == nil || !im.Recovered:
			back = false
		case im.StableRecoverySeconds != nil:
			longest = max(longest, *im.StableRecoverySeconds)
		default:
			longest = max(longest, *im.RecoverySeconds)
		}
	}
	out := strconv.Itoa(injected) + "/" + strconv.Itoa(len(fs)) + " injected"
	if read == 0 {
		return out
	}
	out += "; lowest " + strconv.FormatFloat(100*lowest, 'f', 0, 64) + " %"
	if !back {
		return out + "; not back"
	}
	return out + "; back after " + strconv.FormatFloat(longest, 'f', 0, 64) + " s"
}
