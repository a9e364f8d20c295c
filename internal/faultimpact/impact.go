// Package faultimpact reads what each fault of a run did to the load from
// the measured phase's intervals: how low the publish rate fell, how long
// the load took to come back, whether it stayed back, the failed sends and
// the worst p99 meanwhile. Pure: the intervals, the target rate and the
// faults' times in, the figures out (docs/results.md, "Faults").
//
// The load is "back" in an interval whose publish rate is at least
// RecoveredRateFraction of the target and whose p99 is at most
// RecoveredP99Factor times the median p99 of the intervals before the
// fault; it has recovered once RecoveryIntervals intervals in a row are
// back. The p99 is the corrected one (ack - intended send) where the
// intervals have it: a stalled broker holds the producers' sends back, and
// only the corrected latency counts the wait.
package faultimpact

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// The recovery bar.
const (
	// RecoveredRateFraction: 95 % of the target rate, not 100 %: the rate
	// of a healthy interval wobbles by a few percent (a producer's turn
	// falling on either side of the interval's edge), and a bar at 100 %
	// would call half the healthy intervals unrecovered.
	RecoveredRateFraction = 0.95
	// RecoveredP99Factor: twice the pre-fault median p99. A p99 moves by
	// tens of percent between healthy intervals; twice is beyond that and
	// well below what a broker that is still catching up shows.
	RecoveredP99Factor = 2.0
	// RecoveryIntervals: three 10 s intervals in a row, so one lucky
	// interval between two bad ones is not a recovery.
	RecoveryIntervals = 3
)

// Latency series names (v1alpha1.FaultImpact.LatencySeries).
const (
	SeriesCorrected = "corrected"
	SeriesPublish   = "publish"
)

// Point is one interval of the measured phase, over all workers.
type Point struct {
	// StartSeconds is the interval's start after the measured phase's.
	StartSeconds float64
	Seconds      float64
	// PublishRate is acknowledged messages per second.
	PublishRate float64
	// PublishErrors is the sends that failed in the interval.
	PublishErrors int64
	// Lost is the acknowledged sends of the interval never received
	// (nil: not placed); Duplicates the deliveries beyond the first
	// received in it.
	Lost       *int64
	Duplicates int64
	// P99Ms is the publish latency's p99 (ack - send), CorrectedP99Ms the
	// corrected one (ack - intended send); nil when the interval had no
	// acknowledgement, or (corrected) when it was not recorded.
	P99Ms          *float64
	CorrectedP99Ms *float64
	// MaxMs and CorrectedMaxMs are the interval's longest latencies, nil
	// as the p99s are.
	MaxMs          *float64
	CorrectedMaxMs *float64
}

func (p Point) end() float64 { return p.StartSeconds + p.Seconds }

// Window is one fault as it happened, in seconds after the start of the
// measured phase.
type Window struct {
	InjectedSeconds float64
	// ClearedSeconds is nil when the fault did not end inside the phase
	// (or its end was not seen).
	ClearedSeconds *float64
}

// Options change the recovery bar's length; the zero value is the
// default.
type Options struct {
	// RecoveryIntervals, when above 0, replaces RecoveryIntervals.
	RecoveryIntervals int
}

// Impact is what one fault did. Seconds count from the measured phase's
// start unless the name says otherwise.
type Impact struct {
	Window
	// Covered is false when no interval of the series comes after the
	// injection (the series ended first); nothing else is then set but
	// Notes.
	Covered bool
	// IntervalSeconds is the median interval length: the resolution.
	IntervalSeconds float64
	TargetRate      float64
	// LowestRate is the lowest publish rate over the fault's intervals
	// (from the one holding the injection to the stable recovery, or the
	// clearing if later; to the next fault or the phase's end when the
	// load did not recover), and LowestFraction the same over TargetRate.
	LowestRate     float64
	LowestFraction float64
	// PublishErrors and WorstP99Ms are over the same intervals; WorstP99Ms
	// is nil when none of them had an acknowledgement.
	PublishErrors int64
	// Lost and Duplicates are over the same intervals too; Lost is nil
	// when an interval of them did not place its losses.
	Lost       *int64
	Duplicates int64
	WorstP99Ms *float64
	// LongestWaitMs is the highest interval maximum of Series over the
	// same intervals: the longest a send waited, so how long the writes
	// stopped; nil as WorstP99Ms is.
	LongestWaitMs *float64
	// NotResumedSeconds is set when the writes had not resumed when the
	// load did not recover by the span's end: how long its last intervals
	// went without one acknowledgement (the sends then waiting are never
	// in LongestWaitMs, which counts answered sends only).
	NotResumedSeconds *float64
	// Series is SeriesCorrected or SeriesPublish.
	Series string
	// PreFaultP99Ms is the median p99 of the intervals between the
	// previous fault's stable recovery (or the phase's start) and this
	// fault; nil when there were none.
	PreFaultP99Ms *float64
	// RecoveryIntervals is the bar's length used.
	RecoveryIntervals int
	// RecoverySeconds is from the injection to the start of the first
	// RecoveryIntervals intervals in a row that met the bar; nil when the
	// load never did.
	RecoverySeconds *float64
	// Relapses counts the stretches of intervals below the bar after that.
	Relapses int
	// StableRecoverySeconds is from the injection to the start of the
	// RecoveryIntervals good intervals after the last relapse (after which
	// none failed); nil when the load did not stay back. Recovered says
	// it is set.
	StableRecoverySeconds *float64
	Recovered             bool
	Notes                 []string
}

// ErrNoTargetRate: the dip and the recovery are fractions of the rate the
// producers were asked for.
var ErrNoTargetRate = errors.New("the target rate is needed (the workload's producerRate, or the rate the search found) and must be above 0")

// Compute returns each fault's impact, in the order of faults. points are
// the measured phase's intervals in order; targetRate is the rate the
// producers were asked for.
//
// Faults are taken in the order they came: the intervals before a fault
// that tell its pre-fault p99 are those after the previous fault's stable
// recovery (and its clearing), and a fault's recovery is looked for only
// up to the next fault, whose intervals are that one's.
func Compute(points []Point, targetRate float64, faults []Window, o Options) ([]Impact, error) {
	if !(targetRate > 0) || math.IsInf(targetRate, 0) {
		return nil, ErrNoTargetRate
	}
	n := o.RecoveryIntervals
	if n <= 0 {
		n = RecoveryIntervals
	}
	series, seriesNote := latencySeries(points)
	resolution := medianSeconds(points)

	order := make([]int, len(faults))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return faults[order[a]].InjectedSeconds < faults[order[b]].InjectedSeconds })

	out := make([]Impact, len(faults))
	// from: where the intervals of a fault's pre-fault p99 may start;
	// +Inf once a fault did not recover (none may).
	from := math.Inf(-1)
	var prev *Impact
	var prevFrom, prevEnd float64
	for k, fi := range order {
		w := faults[fi]
		horizon := math.Inf(1)
		for _, later := range order[k+1:] {
			if faults[later].InjectedSeconds > w.InjectedSeconds {
				horizon = faults[later].InjectedSeconds
				break
			}
		}
		together := prev != nil && prev.InjectedSeconds == w.InjectedSeconds
		if together {
			// Faults at the same time share what came before them.
			from = prevFrom
		}
		c := calc{points: points, target: targetRate, n: n, series: series, resolution: resolution}
		im := c.one(w, from, horizon)
		if im.Covered {
			if seriesNote != "" {
				im.Notes = append(im.Notes, seriesNote)
			}
			switch {
			case together:
				im.Notes = append(im.Notes, fmt.Sprintf("came with another fault at %gs: the figures are of both", w.InjectedSeconds))
			case prev == nil:
			case !prev.Recovered:
				im.Notes = append(im.Notes, fmt.Sprintf("came before the fault at %gs had recovered: the figures are of both", prev.InjectedSeconds))
			case prev.ClearedSeconds == nil || w.InjectedSeconds < *prev.ClearedSeconds:
				im.Notes = append(im.Notes, fmt.Sprintf("came before the fault at %gs had cleared: the figures are of both", prev.InjectedSeconds))
			}
		}
		out[fi] = im
		prev, prevFrom, prevEnd = &out[fi], from, c.spanEnd
		from = math.Inf(1)
		if im.Recovered {
			from = prevEnd
		}
	}
	return out, nil
}

// calc computes one fault's impact; spanEnd is where its intervals end
// (seconds), for the next fault's baseline.
type calc struct {
	points     []Point
	target     float64
	n          int
	series     string
	resolution float64
	spanEnd    float64
}

const eps = 1e-9

func (c *calc) p99(p Point) *float64 {
	if c.series == SeriesCorrected {
		return p.CorrectedP99Ms
	}
	return p.P99Ms
}

func (c *calc) max(p Point) *float64 {
	if c.series == SeriesCorrected {
		return p.CorrectedMaxMs
	}
	return p.MaxMs
}

// higher sets *worst to v when v is set and above it.
func higher(worst **float64, v *float64) {
	if v != nil && (*worst == nil || *v > **worst) {
		x := *v
		*worst = &x
	}
}

func (c *calc) one(w Window, baselineFrom, horizon float64) Impact {
	im := Impact{Window: w, TargetRate: c.target, Series: c.series, IntervalSeconds: c.resolution, RecoveryIntervals: c.n}
	inj := w.InjectedSeconds
	first := -1
	for i, p := range c.points {
		if p.end() > inj+eps {
			first = i
			break
		}
	}
	if first < 0 {
		im.Notes = append(im.Notes, fmt.Sprintf("no interval of the measured phase after the fault at %gs: nothing to read", inj))
		c.spanEnd = inj
		return im
	}
	im.Covered = true

	im.PreFaultP99Ms = c.baseline(baselineFrom, inj)
	if im.PreFaultP99Ms == nil {
		switch {
		case math.IsInf(baselineFrom, 1):
			im.Notes = append(im.Notes, "an earlier fault had not recovered: no interval before this one to compare the p99 with, so the recovery is judged on the publish rate alone")
		default:
			im.Notes = append(im.Notes, "no interval before the fault to compare the p99 with: the recovery is judged on the publish rate alone")
		}
	}

	// The fault's own intervals: from the one holding the injection to
	// the last one that ends before the next fault.
	last := first
	for i := first + 1; i < len(c.points) && c.points[i].end() <= horizon+eps; i++ {
		last = i
	}
	if c.points[first].end() > horizon+eps {
		im.Notes = append(im.Notes, fmt.Sprintf("the next fault came at %gs, in the same interval: the figures are of both", horizon))
	}
	good := func(i int) bool {
		p := c.points[i]
		if p.PublishRate < RecoveredRateFraction*c.target {
			return false
		}
		v := c.p99(p)
		return im.PreFaultP99Ms == nil || v == nil || *v <= RecoveredP99Factor**im.PreFaultP99Ms
	}
	holds := func(i int) bool { // n good intervals from i, all before the horizon
		if i+c.n-1 > last {
			return false
		}
		for j := i; j < i+c.n; j++ {
			if !good(j) {
				return false
			}
		}
		return true
	}
	since := func(i int) *float64 {
		s := math.Max(0, c.points[i].StartSeconds-inj)
		return &s
	}

	recovered, stable := -1, -1
	for i := first; i <= last; i++ {
		if holds(i) {
			recovered = i
			break
		}
	}
	if recovered >= 0 {
		im.RecoverySeconds = since(recovered)
		lastBad := -1
		for i := recovered + c.n; i <= last; i++ {
			if !good(i) {
				if good(i - 1) {
					im.Relapses++
				}
				lastBad = i
			}
		}
		switch {
		case lastBad < 0:
			stable = recovered
		case holds(lastBad + 1):
			stable = lastBad + 1
		}
	}
	if stable >= 0 {
		im.Recovered, im.StableRecoverySeconds = true, since(stable)
	}
	if !im.Recovered {
		what := "the end of the measured phase"
		if !math.IsInf(horizon, 1) {
			what = fmt.Sprintf("the next fault at %gs", horizon)
		}
		switch {
		case recovered < 0:
			im.Notes = append(im.Notes, fmt.Sprintf("not recovered before %s", what))
		default:
			im.Notes = append(im.Notes, fmt.Sprintf("recovered, then relapsed and did not hold the bar for %d intervals before %s", c.n, what))
		}
	}

	// The span of the dip, the errors and the worst p99: to the stable
	// recovery or the clearing, whichever is later; to the horizon when
	// the load did not stay back.
	c.spanEnd = c.points[last].end()
	if stable >= 0 {
		c.spanEnd = c.points[stable].StartSeconds
		if w.ClearedSeconds != nil {
			c.spanEnd = math.Max(c.spanEnd, math.Min(*w.ClearedSeconds, c.points[last].end()))
		}
	}
	im.LowestRate = math.Inf(1)
	placed := true
	var lost int64
	for i := first; i <= last && (i == first || c.points[i].StartSeconds < c.spanEnd-eps); i++ {
		p := c.points[i]
		im.LowestRate = math.Min(im.LowestRate, p.PublishRate)
		im.PublishErrors += p.PublishErrors
		im.Duplicates += p.Duplicates
		if p.Lost == nil {
			placed = false
		} else {
			lost += *p.Lost
		}
		higher(&im.WorstP99Ms, c.p99(p))
		higher(&im.LongestWaitMs, c.max(p))
	}
	im.LowestFraction = im.LowestRate / c.target
	if placed {
		im.Lost = &lost
	}
	if !im.Recovered {
		im.NotResumedSeconds = c.unanswered(first, last)
	}
	return im
}

// unanswered is how long the intervals first..last end without an
// acknowledgement (the trailing intervals with no latency), after the
// fault's interval; nil when the last one had one.
func (c *calc) unanswered(first, last int) *float64 {
	from := -1
	for i := last; i > first && c.max(c.points[i]) == nil; i-- {
		from = i
	}
	if from < 0 {
		return nil
	}
	d := c.points[last].end() - c.points[from].StartSeconds
	return &d
}

// baseline is the median p99 of the intervals that lie wholly in
// [from, to); nil when there are none (or none had an acknowledgement).
func (c *calc) baseline(from, to float64) *float64 {
	var v []float64
	for _, p := range c.points {
		if p.StartSeconds+eps < from || p.end() > to+eps {
			continue
		}
		if x := c.p99(p); x != nil && *x > 0 {
			v = append(v, *x)
		}
	}
	if len(v) == 0 {
		return nil
	}
	m := median(v)
	return &m
}

// latencySeries picks the corrected p99 when every interval with a
// publish p99 has it too, and says why when it cannot.
func latencySeries(points []Point) (string, string) {
	some := false
	for _, p := range points {
		if p.P99Ms != nil && p.CorrectedP99Ms == nil {
			return SeriesPublish, "the corrected latency was not recorded for every interval: the p99 is ack - send, which misses the sends a stalled broker held back"
		}
		some = some || p.CorrectedP99Ms != nil
	}
	if !some {
		return SeriesPublish, ""
	}
	return SeriesCorrected, ""
}

func medianSeconds(points []Point) float64 {
	if len(points) == 0 {
		return 0
	}
	v := make([]float64, len(points))
	for i, p := range points {
		v[i] = p.Seconds
	}
	return median(v)
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}
