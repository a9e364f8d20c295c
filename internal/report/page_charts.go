package report

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/plot/plotter"

	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
)

// addCharts adds the report's charts: latency by percentile, the time
// series of the run, and the backlog build and drain.
func addCharts(pg *reportPage, s *results.Summary, omb *results.OMBResult) error {
	if err := addQuantileChart(pg, s, omb); err != nil {
		return err
	}
	tl := newTimeline(s.Series.Points)
	if tl == nil {
		return nil
	}
	tl.marks = faultMarks(s, tl.u)
	if err := tl.addTimeCharts(pg); err != nil {
		return err
	}
	return tl.addDrainChart(pg, s)
}

// addQuantileChart: the measured phase's latency curves, and publish
// latency while a backlog drained.
func addQuantileChart(pg *reportPage, s *results.Summary, omb *results.OMBResult) error {
	if s.CurveIntervals != nil {
		return addRepeatedQuantileChart(pg, s)
	}
	pub, corr, e2e := measureCurves(s, omb)
	var drainPub []results.CurvePoint
	var drainN int64
	if d := phase(s, stats.PhaseDrain); d != nil && d.Curves != nil {
		drainPub, drainN = d.Curves.PublishLatencyMs, samples(d.PublishLatencyMs)
	}
	m := phase(s, stats.PhaseMeasure)
	if m == nil {
		m = &results.PhaseSummary{}
	}
	c, err := quantileChart("latency-quantiles", "Latency by percentile, measured phase", []line{
		{Name: "publish", Color: colPublish, XY: curveXY(pub, samples(m.PublishLatencyMs))},
		{Name: "publish, corrected for coordinated omission", Color: colCorrected, Dashed: true, XY: curveXY(corr, samples(m.CorrectedLatencyMs))},
		{Name: "end-to-end", Color: colEndToEnd, XY: curveXY(e2e, samples(m.EndToEndLatencyMs))},
		{Name: "publish during the backlog drain", Color: colDrain, Dashed: true, XY: curveXY(drainPub, drainN)},
	}, nil, wideW, wideH)
	if err != nil {
		return err
	}
	if c != nil {
		c.Note = "x: percentile on a \"nines\" scale (each step is ten times rarer); y: milliseconds, log scale."
		pg.Latency = append(pg.Latency, c)
	}
	return nil
}

// addRepeatedQuantileChart: a repeated run's curves are, at each
// percentile, the median over its repeats, shaded by that median's
// interval: the error bars of the percentile curve. The curves stop at the
// nines the smallest repeat resolves.
func addRepeatedQuantileChart(pg *reportPage, s *results.Summary) error {
	ci := s.CurveIntervals
	samples := int64(-1)
	for _, r := range s.Repeats {
		if samples < 0 || r.Results.Acked < samples {
			samples = r.Results.Acked
		}
	}
	var lines []line
	var spreads []spread
	for _, c := range []struct {
		name, color string
		dashed      bool
		pts         []results.CurveInterval
	}{
		{"publish", colPublish, false, ci.PublishLatencyMs},
		{"publish, corrected for coordinated omission", colCorrected, true, ci.CorrectedLatencyMs},
		{"end-to-end", colEndToEnd, false, ci.EndToEndLatencyMs},
	} {
		mid, low, high := intervalXY(c.pts, samples)
		if len(mid) == 0 {
			continue
		}
		lines = append(lines, line{Name: c.name + ", median", Color: c.color, Dashed: c.dashed, XY: mid})
		spreads = append(spreads, spread{Color: c.color, Low: low, High: high})
	}
	c, err := quantileChart("latency-quantiles", fmt.Sprintf("Latency by percentile, measured phase, over %d repeats", len(s.Repeats)), lines, spreads, wideW, wideH)
	if err != nil || c == nil {
		return err
	}
	c.Note = fmt.Sprintf("x: percentile on a \"nines\" scale (each step is ten times rarer); y: milliseconds, log scale. "+
		"Each line is the median over the %d repeats at each percentile; its shaded band is that median's %s interval "+
		"(from the repeats' order statistics, as the figures above).", len(s.Repeats), confidenceText(ci.Confidence))
	pg.Latency = append(pg.Latency, c)
	return nil
}

// intervalXY is a curve of a repeated run as plot points (its median, its
// interval's low and high ends), cut as curveXY cuts a run's curve.
func intervalXY(pts []results.CurveInterval, samples int64) (mid, low, high plotter.XYs) {
	maxX := math.Inf(1)
	if samples > 0 {
		maxX = math.Max(2, math.Ceil(math.Log10(float64(samples))))
	}
	for _, p := range pts {
		if p.Percentile >= 100 || p.Percentile < 0 || nines(p.Percentile) > maxX+1e-6 {
			continue
		}
		x := nines(p.Percentile)
		mid = append(mid, plotter.XY{X: x, Y: math.Max(p.Ms, msFloor)})
		low = append(low, plotter.XY{X: x, Y: math.Max(p.Low, msFloor)})
		high = append(high, plotter.XY{X: x, Y: math.Max(p.High, msFloor)})
	}
	return mid, low, high
}

// confidenceText is an interval's coverage as the repeats' table says
// it: "95.0 %", or "93.8 %" for the few repeats that cannot reach 95 %.
func confidenceText(c float64) string {
	return fmt.Sprintf("%.1f %%", 100*c)
}

// timeline is the run's time series as the time charts plot it: points
// at the middle of their interval, in the unit the run's length reads
// best in, over the phases' bands.
type timeline struct {
	pts   []results.SeriesPoint
	u     timeUnit
	bands []band
	// marks are the run's faults (faultMarks).
	marks []faultMark
}

// newTimeline is nil when there is nothing to plot. The cooldown is the
// flush after the load stopped (well under a second): its rates would
// show as a plunge to zero at the end, so it is left out.
func newTimeline(points []results.SeriesPoint) *timeline {
	var pts []results.SeriesPoint
	for _, p := range points {
		if p.Phase != phaseCooldown {
			pts = append(pts, p)
		}
	}
	if len(pts) == 0 {
		return nil
	}
	end := pts[len(pts)-1].OffsetSeconds + pts[len(pts)-1].Seconds
	u := unitFor(end)
	return &timeline{pts: pts, u: u, bands: phaseBands(pts, u)}
}

// series plots f where it has a value.
func (t *timeline) series(f func(results.SeriesPoint) (float64, bool)) plotter.XYs {
	var xy plotter.XYs
	for _, p := range t.pts {
		if v, ok := f(p); ok {
			xy = append(xy, plotter.XY{X: (p.OffsetSeconds + p.Seconds/2) / t.u.seconds, Y: v})
		}
	}
	return xy
}

func (t *timeline) val(f func(results.SeriesPoint) float64) plotter.XYs {
	return t.series(func(p results.SeriesPoint) (float64, bool) { return f(p), true })
}

// p99 plots a latency's p99 where the interval had samples.
func (t *timeline) p99(f func(results.SeriesPoint) *results.LatencyDetail) plotter.XYs {
	return t.series(func(p results.SeriesPoint) (float64, bool) {
		d := f(p)
		if d == nil || d.Count == 0 {
			return 0, false
		}
		return math.Max(d.P99, msFloor), true
	})
}

// timeSpec is one time chart.
type timeSpec struct {
	id, title, y string
	lines        []line
	log          bool
	wide         bool
}

// addTimeCharts: throughput in MB/s and msg/s, and p99 latency over time
// (on a log scale when it spans more than a factor 30).
func (t *timeline) addTimeCharts(pg *reportPage) error {
	charts := []timeSpec{
		{"throughput-mb", "Throughput (MB/s)", "MB/s", []line{
			{Name: "publish", Color: colPublish, XY: t.val(func(p results.SeriesPoint) float64 { return p.PublishMBPerSec })},
			{Name: "consume (all subscriptions)", Color: colConsume, XY: t.val(func(p results.SeriesPoint) float64 { return p.ConsumeMBPerSec })},
		}, false, false},
		{"throughput-msg", "Throughput (msg/s)", "msg/s", []line{
			{Name: "publish", Color: colPublish, XY: t.val(func(p results.SeriesPoint) float64 { return p.PublishRateMsgPerSec })},
			{Name: "consume (all subscriptions)", Color: colConsume, XY: t.val(func(p results.SeriesPoint) float64 { return p.ConsumeRateMsgPerSec })},
		}, false, false},
	}
	p99Lines := []line{
		{Name: "publish p99", Color: colPublish, XY: t.p99(func(p results.SeriesPoint) *results.LatencyDetail { return p.PublishLatencyMs })},
	}
	if len(t.marks) > 0 {
		// The fault figures' p99: a stalled broker's intervals have no
		// acknowledgement, so only the corrected p99 shows the stall.
		p99Lines = append(p99Lines, line{Name: "publish p99, corrected (ack − intended send)", Color: colCorrected, Dashed: true,
			XY: t.p99(func(p results.SeriesPoint) *results.LatencyDetail { return p.CorrectedLatencyMs })})
	}
	p99Lines = append(p99Lines, line{Name: "end-to-end p99", Color: colEndToEnd, XY: t.p99(func(p results.SeriesPoint) *results.LatencyDetail { return p.EndToEndLatencyMs })})
	lo, hi, _ := logRange(p99Lines)
	charts = append(charts, timeSpec{"p99", "99th percentile latency over time", "ms", p99Lines, hi > 30*lo, true})
	for _, ch := range charts {
		y := ch.y
		if ch.log {
			y += ", log scale"
		}
		w, h := float64(halfW), float64(halfH)
		if ch.wide {
			w, h = wideW, wideH
		}
		c, err := timeChart(ch.id, ch.title, y, t.u, t.bands, t.marks, ch.lines, ch.log, w, h)
		if err != nil {
			return err
		}
		if c != nil {
			pg.Timeline = append(pg.Timeline, c)
		}
	}
	return nil
}

// addDrainChart: the backlog in MB while it was built and drained, for
// the catch-up and mixed tests.
func (t *timeline) addDrainChart(pg *reportPage, s *results.Summary) error {
	if phase(s, stats.PhaseDrain) == nil && phase(s, stats.PhaseBacklogBuild) == nil {
		return nil
	}
	size := float64(s.Workload.MessageSize)
	c, err := timeChart("drain", "Backlog build and drain", "backlog (MB)", t.u, t.bands, t.marks, []line{
		{Name: "backlog (all subscriptions)", Color: colBacklog, XY: t.val(func(p results.SeriesPoint) float64 { return float64(p.Backlog) * size / 1e6 })},
	}, false, wideW, halfH)
	if err != nil || c == nil {
		return err
	}
	if cu := s.Results.CatchUp; cu != nil {
		c.Note = fmt.Sprintf("Drained at %s MB/s in %.1f s.", mbps(cu.DrainMBPerSec), cu.DrainSeconds)
	}
	pg.Drain = append(pg.Drain, c)
	return nil
}

// phaseBands merges consecutive series points of one phase into a band.
func phaseBands(pts []results.SeriesPoint, u timeUnit) []band {
	var bands []band
	for _, p := range pts {
		from, to := p.OffsetSeconds/u.seconds, (p.OffsetSeconds+p.Seconds)/u.seconds
		if n := len(bands); n > 0 && bands[n-1].Label == string(p.Phase) {
			bands[n-1].To = to
			continue
		}
		bands = append(bands, band{From: from, To: to, Label: string(p.Phase)})
	}
	return bands
}

// measureCurves returns the quantile curves of the measured phase, from the
// summary, or from the OMB quantile maps when the summary has none.
func measureCurves(s *results.Summary, omb *results.OMBResult) (pub, corr, e2e []results.CurvePoint) {
	if m := phase(s, stats.PhaseMeasure); m != nil && m.Curves != nil {
		pub, corr, e2e = m.Curves.PublishLatencyMs, m.Curves.CorrectedLatencyMs, m.Curves.EndToEndLatencyMs
	}
	// A repeated run's curves are its repeats' medians at each percentile.
	if ci := s.CurveIntervals; ci != nil && len(pub)+len(corr)+len(e2e) == 0 {
		pub, corr, e2e = medians(ci.PublishLatencyMs), medians(ci.CorrectedLatencyMs), medians(ci.EndToEndLatencyMs)
	}
	if omb != nil {
		if len(pub) == 0 {
			pub = quantilePoints(omb.AggregatedPublishLatencyQuantiles)
		}
		if len(e2e) == 0 {
			e2e = quantilePoints(omb.AggregatedEndToEndLatencyQuantiles)
		}
	}
	return pub, corr, e2e
}

func medians(pts []results.CurveInterval) []results.CurvePoint {
	var out []results.CurvePoint
	for _, p := range pts {
		out = append(out, results.CurvePoint{Percentile: p.Percentile, Ms: p.Ms})
	}
	return out
}

func quantilePoints(q results.QuantileMap) []results.CurvePoint {
	var pts []results.CurvePoint
	for p, v := range q {
		pts = append(pts, results.CurvePoint{Percentile: p, Ms: v})
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].Percentile < pts[j].Percentile })
	return pts
}

// samples is the number of values of a distribution, 0 when unknown.
func samples(d *results.LatencyDetail) int64 {
	if d == nil {
		return 0
	}
	return d.Count
}
