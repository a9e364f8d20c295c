package results

import (
	"errors"
	"fmt"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/significance"
	"github.com/streambench/streambench-operator/internal/stats"
)

// Figure is one headline figure that a repeated run carries an interval for
// and compare tests for a difference.
type Figure struct {
	// Name is how tables and verdicts name it, with its unit.
	Name string
	// Key is its name in spec.thresholds: the path in status.results.
	Key v1alpha1.ThresholdFigure
	// Better is the direction in which it improves.
	Better significance.Better
	// Field points at the figure in a headline; nil when the headline has
	// no such figure (no end-to-end latency of a produce-only run).
	Field func(*v1alpha1.ResultsSummary) *float64
	// Tested: compare says whether two runs differ in it. Averages,
	// p99.99 and maxima are not: over a few minutes of a run they are a
	// handful of messages, a repeat's luck more than its setting; and each
	// figure tested is one more chance of a false "different".
	Tested bool
}

// Of is the figure's value in r, and whether r has it.
func (f Figure) Of(r v1alpha1.ResultsSummary) (float64, bool) {
	p := f.Field(&r)
	if p == nil {
		return 0, false
	}
	return *p, true
}

func latency(name, key string, of func(*v1alpha1.ResultsSummary) *v1alpha1.LatencySummary) []Figure {
	at := func(pick func(*v1alpha1.LatencySummary) *float64) func(*v1alpha1.ResultsSummary) *float64 {
		return func(r *v1alpha1.ResultsSummary) *float64 {
			if l := of(r); l != nil {
				return pick(l)
			}
			return nil
		}
	}
	lower := significance.LowerIsBetter
	k := func(field string) v1alpha1.ThresholdFigure { return v1alpha1.ThresholdFigure(key + "." + field) }
	return []Figure{
		{name + " avg (ms)", k("avg"), lower, at(func(l *v1alpha1.LatencySummary) *float64 { return &l.Avg }), false},
		{name + " p50 (ms)", k("p50"), lower, at(func(l *v1alpha1.LatencySummary) *float64 { return &l.P50 }), true},
		{name + " p99 (ms)", k("p99"), lower, at(func(l *v1alpha1.LatencySummary) *float64 { return &l.P99 }), true},
		{name + " p99.9 (ms)", k("p999"), lower, at(func(l *v1alpha1.LatencySummary) *float64 { return &l.P999 }), true},
		{name + " p99.99 (ms)", k("p9999"), lower, at(func(l *v1alpha1.LatencySummary) *float64 { return &l.P9999 }), false},
		{name + " max (ms)", k("max"), lower, at(func(l *v1alpha1.LatencySummary) *float64 { return &l.Max }), false},
	}
}

// Figures are the headline's figures (docs/results.md, "Repeats"): the
// throughput, and publish, corrected and end-to-end latency; Tested marks
// the ones compare tests.
var Figures = append(append(append([]Figure{
	// The rate is MB/s over the message size: one test of the two.
	{"publish rate (msg/s)", "publishRateMsgPerSec", significance.HigherIsBetter, func(r *v1alpha1.ResultsSummary) *float64 { return &r.PublishRateMsgPerSec }, false},
	{"publish MB/s", "publishMBPerSec", significance.HigherIsBetter, func(r *v1alpha1.ResultsSummary) *float64 { return &r.PublishMBPerSec }, true},
	{"consume MB/s", "consumeMBPerSec", significance.HigherIsBetter, func(r *v1alpha1.ResultsSummary) *float64 { return &r.ConsumeMBPerSec }, true},
},
	latency("publish", "publishLatencyMs", func(r *v1alpha1.ResultsSummary) *v1alpha1.LatencySummary { return &r.PublishLatencyMs })...),
	latency("corrected publish", "correctedLatencyMs", func(r *v1alpha1.ResultsSummary) *v1alpha1.LatencySummary { return r.CorrectedLatencyMs })...),
	latency("end-to-end", "endToEndLatencyMs", func(r *v1alpha1.ResultsSummary) *v1alpha1.LatencySummary { return r.EndToEndLatencyMs })...)

// Repeat is one repeat of a repeated run: its headline and where its own
// results are.
type Repeat struct {
	// Index counts from 1, in the order run.
	Index int `json:"index"`
	// Dir is the repeat's results directory, relative to the run's
	// (repeat-<index>), holding its full results: summary, OMB result,
	// HdrHistogram logs, report.
	Dir   string    `json:"dir,omitempty"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Results is the repeat's headline.
	Results v1alpha1.ResultsSummary `json:"results"`
}

// FigureInterval is one figure of a repeated run: the median over its
// repeats (also in the run's results) and the interval of that median.
type FigureInterval struct {
	Figure string `json:"figure"`
	significance.Estimate
}

// CurveInterval is one point of a repeated run's quantile curve: the
// latency at Percentile, the median over the repeats (Ms) in its interval
// (Low, High; see significance.Interval).
type CurveInterval struct {
	Percentile float64 `json:"percentile"`
	Ms         float64 `json:"ms"`
	Low        float64 `json:"low"`
	High       float64 `json:"high"`
}

// CurveIntervals are the measured phase's quantile curves of a repeated
// run, each point over the repeats; a curve some repeat lacks is empty.
type CurveIntervals struct {
	PublishLatencyMs   []CurveInterval `json:"publishLatencyMs,omitempty"`
	CorrectedLatencyMs []CurveInterval `json:"correctedLatencyMs,omitempty"`
	EndToEndLatencyMs  []CurveInterval `json:"endToEndLatencyMs,omitempty"`
	// Confidence is the intervals' coverage (below 95 % for fewer than 6
	// repeats: see significance.Interval).
	Confidence float64 `json:"confidence"`
}

// curveIntervals puts each percentile of one curve of the repeats'
// measured phases in its interval. Every repeat's curve has the same
// percentiles (stats.CurvePercentiles); a repeat without the curve, or
// with other percentiles, leaves it out.
func curveIntervals(repeats []*Summary, of func(*Curves) []CurvePoint) ([]CurveInterval, float64, error) {
	var curves [][]CurvePoint
	for _, s := range repeats {
		var c []CurvePoint
		for _, ph := range s.Phases {
			if ph.Phase == stats.PhaseMeasure && ph.Curves != nil {
				c = of(ph.Curves)
			}
		}
		if len(c) == 0 || (len(curves) > 0 && len(c) != len(curves[0])) {
			return nil, 0, nil
		}
		curves = append(curves, c)
	}
	out := make([]CurveInterval, len(curves[0]))
	var conf float64
	for i := range out {
		p := curves[0][i].Percentile
		vals := make([]float64, len(curves))
		for j, c := range curves {
			if c[i].Percentile != p {
				return nil, 0, nil
			}
			vals[j] = c[i].Ms
		}
		e, err := significance.Interval(vals, 0)
		if err != nil {
			return nil, 0, fmt.Errorf("the curve at percentile %g: %w", p, err)
		}
		out[i] = CurveInterval{Percentile: p, Ms: e.Median, Low: e.Low, High: e.High}
		conf = e.Confidence
	}
	return out, conf, nil
}

// Fold is what a cell's repeats that have results stand as in a table:
// the one repeat's summary, or their Aggregate (names as its dirs).
func Fold(repeats []*Summary, names []string) (*Summary, error) {
	if len(repeats) == 1 {
		return repeats[0], nil
	}
	return Aggregate(repeats, names)
}

// ErrOneRepeat is Aggregate's error for fewer than two repeats.
var ErrOneRepeat = errors.New("a repeated run needs at least two repeats")

// Aggregate is the summary of a run repeated on the same brokers, from its
// repeats' summaries in the order run (dirs[i] the directory of
// repeats[i], relative to the run's). The headline is the median over the
// repeats of each figure, the counts (sent, acknowledged, lost, ...) are
// sums, and Intervals puts the median of each figure in its
// distribution-free interval. The time series, phases and broker figures
// stay in each repeat's own summary; the aggregate keeps what the repeats
// share (workload, durability, testbed, brokers) from the first.
func Aggregate(repeats []*Summary, dirs []string) (*Summary, error) {
	if len(repeats) < 2 {
		return nil, ErrOneRepeat
	}
	if len(dirs) != len(repeats) {
		return nil, fmt.Errorf("aggregate: %d repeats but %d directories", len(repeats), len(dirs))
	}
	first, last := repeats[0], repeats[len(repeats)-1]
	agg := &Summary{
		SchemaVersion: SchemaVersion, Run: first.Run, System: first.System, Workload: first.Workload,
		Durability: first.Durability, Start: first.Start, End: last.End, Workers: first.Workers,
		Testbed: first.Testbed, Brokers: first.Brokers, Security: first.Security,
		FailureSettings: first.FailureSettings,
	}
	var corrected, endToEnd bool = true, true
	for i, s := range repeats {
		r := s.Results
		agg.Repeats = append(agg.Repeats, Repeat{Index: i + 1, Dir: dirs[i], Start: s.Start, End: s.End, Results: r})
		corrected = corrected && r.CorrectedLatencyMs != nil
		endToEnd = endToEnd && r.EndToEndLatencyMs != nil
		h := &agg.Results
		h.Partial = h.Partial || r.Partial
		h.Sent += r.Sent
		h.Acked += r.Acked
		h.Received += r.Received
		h.Lost += r.Lost
		h.NotConsumed += r.NotConsumed
		h.Duplicates += r.Duplicates
		agg.Duplicates += s.Duplicates
		for _, n := range s.Notes {
			agg.Notes = append(agg.Notes, fmt.Sprintf("repeat %d: %s", i+1, n))
		}
		// Each repeat's faults (each entry names its repeat), as
		// status.faults has them.
		agg.Faults = append(agg.Faults, s.Faults...)
	}
	// A latency every repeat has gets a median; one some repeat lacks
	// (a produce-only repeat has no end-to-end) is left out.
	if corrected {
		agg.Results.CorrectedLatencyMs = &v1alpha1.LatencySummary{}
	}
	if endToEnd {
		agg.Results.EndToEndLatencyMs = &v1alpha1.LatencySummary{}
	}
	for _, f := range Figures {
		dst := f.Field(&agg.Results)
		if dst == nil {
			continue
		}
		var vals []float64
		for _, s := range repeats {
			if v, ok := f.Of(s.Results); ok {
				vals = append(vals, v)
			}
		}
		e, err := significance.Interval(vals, 0)
		if err != nil {
			return nil, fmt.Errorf("aggregate: %s: %w", f.Name, err)
		}
		*dst = e.Median
		agg.Intervals = append(agg.Intervals, FigureInterval{Figure: f.Name, Estimate: e})
	}
	ci := &CurveIntervals{}
	for _, c := range []struct {
		dst *[]CurveInterval
		of  func(*Curves) []CurvePoint
	}{
		{&ci.PublishLatencyMs, func(c *Curves) []CurvePoint { return c.PublishLatencyMs }},
		{&ci.CorrectedLatencyMs, func(c *Curves) []CurvePoint { return c.CorrectedLatencyMs }},
		{&ci.EndToEndLatencyMs, func(c *Curves) []CurvePoint { return c.EndToEndLatencyMs }},
	} {
		pts, conf, err := curveIntervals(repeats, c.of)
		if err != nil {
			return nil, fmt.Errorf("aggregate: %w", err)
		}
		if pts != nil {
			*c.dst, ci.Confidence = pts, conf
			agg.CurveIntervals = ci
		}
	}
	return agg, nil
}

// FigureOf is the figure spec.thresholds calls key, if any.
func FigureOf(key v1alpha1.ThresholdFigure) (Figure, bool) {
	for _, f := range Figures {
		if f.Key == key {
			return f, true
		}
	}
	return Figure{}, false
}

// Interval is the interval of a repeated run's figure, if it has one.
func (s *Summary) Interval(f Figure) (significance.Estimate, bool) {
	for _, iv := range s.Intervals {
		if iv.Figure == f.Name {
			return iv.Estimate, true
		}
	}
	return significance.Estimate{}, false
}

// RepeatValues are the values of a figure over a run's repeats; a run that
// was not repeated gives its one value.
func (s *Summary) RepeatValues(f Figure) []float64 {
	if len(s.Repeats) == 0 {
		if v, ok := f.Of(s.Results); ok {
			return []float64{v}
		}
		return nil
	}
	var vals []float64
	for _, r := range s.Repeats {
		if v, ok := f.Of(r.Results); ok {
			vals = append(vals, v)
		}
	}
	return vals
}
