// Package report renders a run's results (summary.json and, when present,
// omb-result.json; see docs/results.md) as one self-contained HTML page, and
// compares runs in the layout of the durability study's (docs/methodology.md) latency tables
// (rows per run; Average, P50, P90, P99, P999). Charts are inline SVG drawn
// by gonum.org/v1/plot: the page loads nothing when viewed, so it can be
// mailed, attached to an issue or opened from a ConfigMap dump.
package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot/plotter"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	dur "github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
)

// phaseCooldown is the coordinator's phase after the load stopped
// (coordinator.PhaseCooldown; not imported, to keep the coordinator's
// dependencies out of the report).
const phaseCooldown stats.Phase = "cooldown"

// FileName is the report RenderDir writes into a results directory.
const FileName = "report.html"

// Named is one run's results under the name it is shown with.
type Named struct {
	Name    string
	Summary *results.Summary
	// OMB may be nil: the report and the comparison need only the summary.
	OMB *results.OMBResult
}

// StatusFaultsFile is a BenchmarkRun's status.faults as JSON, written
// beside a cluster run's summary.json by `streambench report` and
// `compare`: the controller injects a cluster run's faults and records
// them in the run's status, which the coordinator's summary.json does not
// hold. Local mode's summary.json has its own faults.
const StatusFaultsFile = "status-faults.json"

// Load reads dir/summary.json and, if present, dir/omb-result.json. The
// name is the summary's run name, or the directory's name when it has none.
// A summary without faults takes them from dir/status-faults.json, if
// there is one.
func Load(dir string) (Named, error) {
	raw, err := os.ReadFile(filepath.Join(dir, results.KeySummary))
	if err != nil {
		return Named{}, fmt.Errorf("%s: %w (a results directory holds %s from `streambench run --local` or the coordinator's --output-dir)", dir, err, results.KeySummary)
	}
	var s results.Summary
	if err := json.Unmarshal(raw, &s); err != nil {
		return Named{}, fmt.Errorf("%s: %w", filepath.Join(dir, results.KeySummary), err)
	}
	if len(s.Faults) == 0 {
		raw, err := os.ReadFile(filepath.Join(dir, StatusFaultsFile))
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return Named{}, err
		default:
			if err := json.Unmarshal(raw, &s.Faults); err != nil {
				return Named{}, fmt.Errorf("%s: %w", filepath.Join(dir, StatusFaultsFile), err)
			}
		}
	}
	n := Named{Name: s.Run, Summary: &s}
	if n.Name == "" {
		n.Name = filepath.Base(filepath.Clean(dir))
	}
	raw, err = os.ReadFile(filepath.Join(dir, results.KeyOMB))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return Named{}, err
	default:
		var o results.OMBResult
		if err := json.Unmarshal(raw, &o); err != nil {
			return Named{}, fmt.Errorf("%s: %w", filepath.Join(dir, results.KeyOMB), err)
		}
		n.OMB = &o
	}
	return n, nil
}

// RenderDir reads the results in dir, writes dir/report.html and returns
// its path.
func RenderDir(dir string) (string, error) {
	n, err := Load(dir)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, FileName)
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if err := Render(f, n.Summary, n.OMB); err != nil {
		_ = f.Close()
		return "", err
	}
	return path, f.Close()
}

// Render writes the HTML report of one run; omb may be nil.
func Render(w io.Writer, s *results.Summary, omb *results.OMBResult) error {
	if s == nil {
		return errors.New("report: no summary to render")
	}
	pg, err := buildPage(s, omb)
	if err != nil {
		return err
	}
	return reportTmpl.Execute(w, pg)
}

// reportPage is what the report template shows.
type reportPage struct {
	Title     string
	Run       string
	System    string
	Workload  string
	Level     *levelBadge
	Period    string
	Generated string
	Warnings  []string
	Cards     []card
	Latency   []*chart
	Timeline  []*chart
	Drain     []*chart

	LatencyRows []latencyRow
	// ToolDelay says whose latency it is (ToolDelay.Sentence).
	ToolDelay  string
	Counts     []kv
	Phases     []phaseRow
	Durability *durabilityView
	WorkloadKV []kv
	Clocks     []results.ClockOffset
	Testbed    *v1alpha1.Testbed
	BrokerRes  *brokerResView
	Brokers    *results.BrokerSetup
	Security   *securityView
	RateSearch *results.RateSearch
	Subs       *results.Subscriptions
	Truncation *results.Truncation
	Notes      []string
	Workers    []string
	// Repeats is a repeated run's figures over its repeats; nil for a run
	// not repeated.
	Repeats *repeatsView

	// Machines is the testbed's line on which nodes share a machine;
	// NodeMachine the id each node on a shared machine shares with the
	// others, shown beside it.
	Machines    *machinesView
	NodeMachine map[string]string

	// Faults is the run's faults and what each did; nil for a run
	// without spec.faults.
	Faults *faultsView
}

// repeatsView is a repeated run's section: each tested figure's median in
// its interval beside every repeat's value, and the repeats' own reports.
type repeatsView struct {
	N       int
	Columns []string // "repeat 1", ... linking Links
	Links   []string
	Rows    []repeatsRow
	// Confidence is the intervals' coverage, said when below 95 %.
	Confidence float64
}

type repeatsRow struct {
	Figure, Median, Interval string
	Values                   []string
}

// repeatsOf is the repeats section of a repeated run's summary.
func repeatsOf(s *results.Summary) *repeatsView {
	if len(s.Repeats) == 0 {
		return nil
	}
	v := &repeatsView{N: len(s.Repeats)}
	for _, r := range s.Repeats {
		v.Columns = append(v.Columns, fmt.Sprintf("repeat %d", r.Index))
		v.Links = append(v.Links, path.Join(r.Dir, FileName))
	}
	for _, f := range results.Figures {
		iv, ok := s.Interval(f)
		if !f.Tested || !ok {
			continue
		}
		v.Confidence = iv.Confidence
		row := repeatsRow{Figure: f.Name, Median: strconv.FormatFloat(iv.Median, 'g', 4, 64),
			Interval: fmt.Sprintf("%s – %s", strconv.FormatFloat(iv.Low, 'g', 4, 64), strconv.FormatFloat(iv.High, 'g', 4, 64))}
		for _, r := range s.Repeats {
			if x, ok := f.Of(r.Results); ok {
				row.Values = append(row.Values, strconv.FormatFloat(x, 'g', 4, 64))
			} else {
				row.Values = append(row.Values, "–")
			}
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

type levelBadge struct {
	Achieved, Requested v1alpha1.Level
	Lowered             bool
	// Evidence is how the level was established (see durabilityView).
	Evidence string
}

type card struct {
	Label, Value, Unit, Sub string
	Bad                     bool
}

type kv struct {
	Key, Value string
	Bad        bool
}

type latencyRow struct {
	Name string
	Note string
	D    *results.LatencyDetail
}

type phaseRow struct {
	results.PhaseSummary
	PubP99, E2EP99 string
}

type durabilityView struct {
	*v1alpha1.EffectiveDurability
	// Evidence is "verified for <system> <version>" or "as configured,
	// not verified" (internal/durability.VerificationLabel).
	Evidence   string
	Components []component
}

type component struct {
	Name     string
	Settings []kv
}

func buildPage(s *results.Summary, omb *results.OMBResult) (*reportPage, error) {
	r := s.Results
	pg := &reportPage{
		Title:      fmt.Sprintf("%s — streambench report", nonEmpty(s.Run, "run")),
		Run:        nonEmpty(s.Run, "(unnamed run)"),
		System:     string(s.System),
		Workload:   s.Workload.Name,
		Generated:  time.Now().UTC().Format("2006-01-02 15:04 MST"),
		Clocks:     s.ClockOffsets,
		Testbed:    s.Testbed,
		BrokerRes:  brokerResources(s.BrokerResources),
		RateSearch: s.RateSearch,
		Truncation: s.Truncation,
		Repeats:    repeatsOf(s),
		Notes:      s.Notes,
		Workers:    s.Workers,
	}
	if !s.Start.IsZero() {
		pg.Period = fmt.Sprintf("%s – %s (%s)", s.Start.UTC().Format("2006-01-02 15:04:05"), s.End.UTC().Format("15:04:05 MST"), s.End.Sub(s.Start).Round(time.Second))
	}
	if r.Partial {
		pg.Warnings = append(pg.Warnings, "Partial results: the run did not finish; the figures are what was measured before it stopped (see the notes for why)")
	}
	if d := s.Durability; d != nil {
		pg.Level = &levelBadge{Achieved: d.AchievedLevel, Requested: d.RequestedLevel, Lowered: d.AchievedLevel != d.RequestedLevel, Evidence: dur.VerificationLabel(d)}
		if pg.Level.Lowered {
			pg.Warnings = append(pg.Warnings, fmt.Sprintf("Durability level %d was requested but only level %d is achieved: %s", d.RequestedLevel, d.AchievedLevel, nonEmpty(d.Explanation, "see the durability table")))
		}
	}
	if r.Lost > 0 {
		pg.Warnings = append(pg.Warnings, fmt.Sprintf("%s acknowledged messages were lost (never delivered to every subscription).", count(r.Lost)))
	}
	pg.Machines, pg.NodeMachine = machinesOf(s.Testbed)
	sharedHost := sharedHostNode(s)
	if pg.BrokerRes != nil {
		pg.BrokerRes.Shared = sharedBrokerNodes(s)
		if sharedHost != "" {
			pg.BrokerRes.Notes = append(slices.Clip(pg.BrokerRes.Notes), sharedHost)
		}
	}
	if h := hostOf(s); h != nil && h.CPUBound {
		w := "Host CPU-bound: " + h.CPUVerdict
		if sharedHost != "" {
			w += "; " + sharedHost
		}
		pg.Warnings = append(pg.Warnings, w+".")
	}
	if r.NotConsumed > 0 {
		pg.Warnings = append(pg.Warnings, fmt.Sprintf("%s acknowledged messages were not consumed when the final drain ended: the consumers were still reading (slow, not lost), so the consume rate and end-to-end latency cover only what they read.", count(r.NotConsumed)))
	}
	if s.Truncation != nil {
		pg.Warnings = append(pg.Warnings, "The results were thinned to fit the ConfigMap; see Truncation at the end.")
	}

	pg.Brokers = s.Brokers
	pg.Security = securityOf(s)
	if w := securityWarning(s.Security); w != "" {
		pg.Warnings = append(pg.Warnings, w)
	}
	pg.Cards = headlineCards(s)
	pg.Faults = faultsSection(s)
	if err := addCharts(pg, s, omb); err != nil {
		return nil, err
	}

	measure := phase(s, stats.PhaseMeasure)
	if measure != nil {
		for _, l := range []latencyRow{
			{"Publish", "ack − send", measure.PublishLatencyMs},
			{"Publish, corrected", "ack − intended send (no coordinated omission)", measure.CorrectedLatencyMs},
			{"Send delay", "send − intended send", measure.SendDelayMs},
			{"End-to-end", "receive − send timestamp", measure.EndToEndLatencyMs},
			{"End-to-end, catch-up", "catch-up subscriptions", measure.CatchUpEndToEndLatencyMs},
		} {
			if l.D != nil {
				pg.LatencyRows = append(pg.LatencyRows, l)
			}
		}
	}
	if d, ok := ToolDelayOf(s); ok {
		pg.ToolDelay = d.Sentence(DefaultFairness)
	}
	if d := phase(s, stats.PhaseDrain); d != nil {
		if d.PublishLatencyMs != nil {
			pg.LatencyRows = append(pg.LatencyRows, latencyRow{"Publish during drain", "drain phase", d.PublishLatencyMs})
		}
		if d.CatchUpEndToEndLatencyMs != nil {
			pg.LatencyRows = append(pg.LatencyRows, latencyRow{"End-to-end, catch-up, drain", "drain phase", d.CatchUpEndToEndLatencyMs})
		}
	}
	if len(pg.LatencyRows) == 0 {
		// A summary without phases (hand-made, or an older coordinator):
		// the headline still has the numbers.
		pg.LatencyRows = append(pg.LatencyRows, latencyRow{"Publish", "ack − send", fromSummary(&r.PublishLatencyMs)})
		if r.EndToEndLatencyMs != nil {
			pg.LatencyRows = append(pg.LatencyRows, latencyRow{"End-to-end", "receive − send timestamp", fromSummary(r.EndToEndLatencyMs)})
		}
	}

	var pubErrors int64
	for _, p := range s.Phases {
		pubErrors += p.PublishErrors
	}
	pg.Counts = []kv{
		{Key: "Sent", Value: count(r.Sent)},
		{Key: "Acknowledged", Value: count(r.Acked)},
		{Key: "Publish errors", Value: count(pubErrors), Bad: pubErrors > 0},
		{Key: "Received (all subscriptions)", Value: count(r.Received)},
		{Key: "Lost", Value: count(r.Lost), Bad: r.Lost > 0},
		{Key: "Not consumed (backlog at the end)", Value: count(r.NotConsumed), Bad: r.NotConsumed > 0},
		{Key: "Duplicates", Value: count(s.Duplicates), Bad: s.Duplicates > 0},
	}
	for _, p := range s.Phases {
		row := phaseRow{PhaseSummary: p, PubP99: "–", E2EP99: "–"}
		if p.PublishLatencyMs != nil {
			row.PubP99 = ms(p.PublishLatencyMs.P99)
		}
		if p.EndToEndLatencyMs != nil {
			row.E2EP99 = ms(p.EndToEndLatencyMs.P99)
		}
		pg.Phases = append(pg.Phases, row)
	}
	if s.Durability != nil {
		pg.Durability = durability(s.Durability)
	}
	pg.WorkloadKV = workloadKV(s.Workload)
	if s.Subscriptions.Count > 0 {
		pg.Subs = &s.Subscriptions
	}
	return pg, nil
}

func headlineCards(s *results.Summary) []card {
	r := s.Results
	cards := []card{
		{Label: "Publish rate", Value: count(int64(math.Round(r.PublishRateMsgPerSec))), Unit: "msg/s", Sub: mbps(r.PublishMBPerSec) + " MB/s"},
		{Label: "Consume rate", Value: mbps(r.ConsumeMBPerSec), Unit: "MB/s", Sub: "all subscriptions"},
		{Label: "Publish p99", Value: ms(r.PublishLatencyMs.P99), Unit: "ms", Sub: "ack − send · p50 " + ms(r.PublishLatencyMs.P50) + " ms"},
	}
	if c := correctedOf(s); c != nil {
		// Beside the publish latency, so a slipped schedule (coordinated
		// omission) cannot hide behind it.
		cards = append(cards, card{Label: "Corrected p99", Value: ms(c.P99), Unit: "ms", Sub: "ack − intended send · p50 " + ms(c.P50) + " ms"})
	}
	if e := r.EndToEndLatencyMs; e != nil {
		cards = append(cards, card{Label: "End-to-end p99", Value: ms(e.P99), Unit: "ms", Sub: "p50 " + ms(e.P50) + " ms"})
	}
	if c := r.CatchUp; c != nil {
		cards = append(cards, card{Label: "Backlog drain", Value: mbps(c.DrainMBPerSec), Unit: "MB/s", Sub: fmt.Sprintf("in %.1f s", c.DrainSeconds)})
	}
	cards = append(cards, card{Label: "Lost / duplicates", Value: count(r.Lost) + " / " + count(s.Duplicates), Sub: "of " + count(r.Acked) + " acked", Bad: r.Lost > 0 || s.Duplicates > 0})
	if r.NotConsumed > 0 {
		cards = append(cards, card{Label: "Not consumed", Value: count(r.NotConsumed), Sub: "backlog at the end: slow, not lost", Bad: true})
	}
	return cards
}

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

func phase(s *results.Summary, ph stats.Phase) *results.PhaseSummary {
	for i := range s.Phases {
		if s.Phases[i].Phase == ph {
			return &s.Phases[i]
		}
	}
	return nil
}

// correctedOf is the headline's corrected publish latency (ack - intended
// send), or the measured phase's for a summary written before the headline
// had it; nil when neither has one.
func correctedOf(s *results.Summary) *v1alpha1.LatencySummary {
	if c := s.Results.CorrectedLatencyMs; c != nil {
		return c
	}
	if m := phase(s, stats.PhaseMeasure); m != nil && m.CorrectedLatencyMs != nil {
		d := m.CorrectedLatencyMs
		return &v1alpha1.LatencySummary{Avg: d.Avg, P50: d.P50, P99: d.P99, P999: d.P999, P9999: d.P9999, Max: d.Max}
	}
	return nil
}

func fromSummary(l *v1alpha1.LatencySummary) *results.LatencyDetail {
	nan := math.NaN()
	return &results.LatencyDetail{Avg: l.Avg, P50: l.P50, P75: nan, P95: nan, P99: l.P99, P999: l.P999, P9999: l.P9999, Max: l.Max, Count: -1}
}

func durability(d *v1alpha1.EffectiveDurability) *durabilityView {
	v := &durabilityView{EffectiveDurability: d, Evidence: dur.VerificationLabel(d)}
	if k := d.Kafka; k != nil {
		v.Components = append(v.Components,
			component{"Kafka topics", append([]kv{{Key: "replication factor", Value: fmt.Sprint(k.ReplicationFactor)}}, sortedKV(k.Topic)...)},
			component{"Kafka producers", sortedKV(k.Producer)},
			component{"Kafka brokers", sortedKV(k.Broker)})
	}
	if p := d.Pulsar; p != nil {
		v.Components = append(v.Components,
			component{"Pulsar namespace persistence", []kv{
				{Key: "ensemble size", Value: fmt.Sprint(p.EnsembleSize)},
				{Key: "write quorum", Value: fmt.Sprint(p.WriteQuorum)},
				{Key: "ack quorum", Value: fmt.Sprint(p.AckQuorum)},
			}},
			component{"Pulsar bookies", sortedKV(p.Bookie)},
			component{"Pulsar brokers", sortedKV(p.Broker)})
	}
	return v
}

func sortedKV(m map[string]string) []kv {
	out := make([]kv, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, kv{Key: k, Value: m[k]})
	}
	return out
}

func workloadKV(w v1alpha1.WorkloadSpec) []kv {
	out := []kv{
		{Key: "name", Value: nonEmpty(w.Name, "–")},
		{Key: "topics", Value: fmt.Sprint(w.Topics)},
		{Key: "partitions per topic", Value: fmt.Sprint(w.PartitionsPerTopic)},
		{Key: "message size", Value: count(int64(w.MessageSize)) + " bytes"},
	}
	rate := "maximum (rate search)"
	if w.ProducerRate > 0 {
		rate = count(w.ProducerRate) + " msg/s"
	}
	out = append(out, kv{Key: "producer rate", Value: rate},
		kv{Key: "producers per topic", Value: fmt.Sprint(w.ProducersPerTopic)})
	if w.SubscriptionsPerTopic != nil {
		out = append(out, kv{Key: "subscriptions per topic", Value: fmt.Sprint(*w.SubscriptionsPerTopic)})
	}
	out = append(out, kv{Key: "consumers per subscription", Value: fmt.Sprint(w.ConsumerPerSubscription)})
	if w.KeyDistributor != "" {
		out = append(out, kv{Key: "key distributor", Value: string(w.KeyDistributor)})
	}
	if w.PayloadFile != "" {
		v := w.PayloadFile
		if w.UseRandomizedPayloads {
			v += " (not read: randomized payloads win, as in OMB)"
		}
		out = append(out, kv{Key: "payload file", Value: v})
	}
	if w.UseRandomizedPayloads {
		v := "yes"
		if w.RandomBytesRatio != nil {
			v += fmt.Sprintf(", random bytes ratio %g", *w.RandomBytesRatio)
		}
		if w.RandomizedPayloadPoolSize != nil {
			v += fmt.Sprintf(", pool %d", *w.RandomizedPayloadPoolSize)
		}
		out = append(out, kv{Key: "randomized payloads", Value: v})
	}
	if w.WarmupDurationMinutes != nil {
		out = append(out, kv{Key: "warm-up", Value: minutes(*w.WarmupDurationMinutes)})
	}
	if w.TestDurationMinutes != nil {
		out = append(out, kv{Key: "test duration", Value: minutes(*w.TestDurationMinutes)})
	}
	if w.ConsumerBacklogSizeGB != nil && *w.ConsumerBacklogSizeGB > 0 {
		out = append(out, kv{Key: "consumer backlog", Value: fmt.Sprintf("%g GiB", *w.ConsumerBacklogSizeGB)})
	}
	if w.BacklogDrainRatio != nil {
		out = append(out, kv{Key: "backlog drain ratio", Value: fmt.Sprintf("%g", *w.BacklogDrainRatio)})
	}
	if w.Mixed != nil {
		out = append(out, kv{Key: "mixed: catch-up subscriptions per topic", Value: fmt.Sprint(w.Mixed.CatchUpSubscriptionsPerTopic)})
	}
	return out
}

func minutes(m float64) string {
	d := time.Duration(m * float64(time.Minute)).Round(time.Second)
	return fmt.Sprintf("%g min (%s)", m, d)
}

func nonEmpty(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// ms formats a latency in milliseconds as the source studies' tables do (two
// decimals), with fewer digits for large values.
func ms(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case v >= 10000:
		return count(int64(math.Round(v)))
	case v >= 1000:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func mbps(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// count formats an integer with thousands separators.
func count(n int64) string {
	if n < 0 {
		return "-" + count(-n)
	}
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
