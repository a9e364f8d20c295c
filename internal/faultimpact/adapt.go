package faultimpact

import (
	"fmt"
	"math"
	"slices"

	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
)

// FromSeries takes the measured phase's points of summary.json's series,
// with their starts counted from the phase's first point, without the
// slivers its start and stop cut (trimSlivers). It is the
// series to read faults from: it has the corrected p99 of each interval,
// which the OMB result has not.
func FromSeries(s results.Series) []Point {
	var out []Point
	start := math.NaN()
	for _, sp := range s.Points {
		if sp.Phase != stats.PhaseMeasure {
			continue
		}
		if math.IsNaN(start) {
			start = sp.OffsetSeconds
		}
		p := Point{
			StartSeconds: sp.OffsetSeconds - start,
			Seconds:      sp.Seconds,
			PublishRate:  sp.PublishRateMsgPerSec,
			// The series keeps the error rate; the count is back within
			// rounding.
			PublishErrors: int64(math.Round(sp.PublishErrorRateMsgPerSec * sp.Seconds)),
			Lost:          sp.Lost,
			Duplicates:    sp.Duplicates,
		}
		if l := sp.PublishLatencyMs; l != nil && l.Count > 0 {
			p.P99Ms, p.MaxMs = ptr.To(l.P99), ptr.To(l.Max)
		}
		if l := sp.CorrectedLatencyMs; l != nil && l.Count > 0 {
			p.CorrectedP99Ms, p.CorrectedMaxMs = ptr.To(l.P99), ptr.To(l.Max)
		}
		out = append(out, p)
	}
	return trimSlivers(out)
}

// trimSlivers drops a first or last interval shorter than half the
// others: the phase's start and stop cut an interval wherever they come,
// and a sliver of a few milliseconds holds a rate of next to nothing
// (the producers were told to stop just before the cut), which the
// recovery would count as the load falling again at the very end. Pure.
func trimSlivers(points []Point) []Point {
	if len(points) < 3 {
		return points
	}
	lengths := make([]float64, len(points))
	for i, p := range points {
		lengths[i] = p.Seconds
	}
	slices.Sort(lengths)
	half := lengths[len(lengths)/2] / 2
	if points[len(points)-1].Seconds < half {
		points = points[:len(points)-1]
	}
	if points[0].Seconds < half {
		points = points[1:]
	}
	return points
}

// FromOMB takes the OMB result's lists, one entry per interval of the
// measured phase, each intervalSeconds long (OMB's lists carry no time).
// OMB has no corrected latency, so Compute falls back to the publish p99
// and says so; an interval without an acknowledgement has no p99 (OMB
// writes 0 there).
func FromOMB(r *results.OMBResult, intervalSeconds float64) ([]Point, error) {
	n := len(r.PublishRate)
	if len(r.PublishErrorRate) != n || len(r.PublishLatency99pct) != n {
		return nil, fmt.Errorf("the OMB result's lists differ in length (publishRate %d, publishErrorRate %d, publishLatency99pct %d)",
			n, len(r.PublishErrorRate), len(r.PublishLatency99pct))
	}
	if !(intervalSeconds > 0) {
		return nil, fmt.Errorf("the interval length must be above 0 seconds (the coordinator's is 10), not %g", intervalSeconds)
	}
	out := make([]Point, n)
	for i := range out {
		out[i] = Point{
			StartSeconds:  float64(i) * intervalSeconds,
			Seconds:       intervalSeconds,
			PublishRate:   r.PublishRate[i],
			PublishErrors: int64(math.Round(r.PublishErrorRate[i] * intervalSeconds)),
		}
		if r.PublishRate[i] > 0 {
			out[i].P99Ms = ptr.To(r.PublishLatency99pct[i])
		}
	}
	return out, nil
}

// Status is the impact as status.faults[].impact has it; nil when no
// interval came after the fault.
func (im Impact) Status() *v1alpha1.FaultImpact {
	if !im.Covered {
		return nil
	}
	return &v1alpha1.FaultImpact{
		IntervalSeconds:            im.IntervalSeconds,
		InjectedSeconds:            im.InjectedSeconds,
		ClearedSeconds:             im.ClearedSeconds,
		TargetRateMsgPerSec:        im.TargetRate,
		LowestPublishRateMsgPerSec: im.LowestRate,
		LowestRateFraction:         im.LowestFraction,
		RecoveryIntervals:          int32(im.RecoveryIntervals),
		RecoverySeconds:            im.RecoverySeconds,
		Relapses:                   int32(im.Relapses),
		Recovered:                  im.Recovered,
		StableRecoverySeconds:      im.StableRecoverySeconds,
		PublishErrors:              im.PublishErrors,
		Lost:                       im.Lost,
		Duplicates:                 im.Duplicates,
		LatencySeries:              im.Series,
		PreFaultP99Ms:              im.PreFaultP99Ms,
		WorstP99Ms:                 im.WorstP99Ms,
		LongestWaitMs:              im.LongestWaitMs,
		NotResumedSeconds:          im.NotResumedSeconds,
		Notes:                      im.Notes,
	}
}
