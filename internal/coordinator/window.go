package coordinator

import (
	"time"

	"github.com/streambench/streambench-operator/internal/stats"
)

// MeasuredWindow is the wall-clock span of the measured phase: the
// earliest start and the latest end of its snapshots over all workers. The
// brokers' resources (internal/brokerres) are read over it. False when the
// run did not reach the measured phase.
func (r *Result) MeasuredWindow() (start, end time.Time, ok bool) {
	for _, s := range stats.OfPhase(r.Snapshots, stats.PhaseMeasure) {
		if !ok || s.Start.Before(start) {
			start = s.Start
		}
		if !ok || s.End.After(end) {
			end = s.End
		}
		ok = true
	}
	return start, end, ok && end.After(start)
}
