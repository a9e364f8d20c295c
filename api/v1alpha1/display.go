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
