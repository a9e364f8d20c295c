package report

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"gonum.org/v1/plot/plotter"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	dur "github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/javaruntime"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/significance"
	"github.com/streambench/streambench-operator/internal/stats"
)

// Latency is one row of the source studies' (docs/methodology.md) latency tables, in ms. A value that the
// results do not hold is NaN.
type Latency struct {
	Avg, P50, P90, P99, P999 float64
}

// Row is one run of a comparison.
type Row struct {
	Name   string
	System v1alpha1.System
	// RequestedLevel and AchievedLevel are 0 when the summary has no
	// durability.
	RequestedLevel, AchievedLevel v1alpha1.Level
	// Evidence says how the level was established: "verified for Kafka
	// 4.3.1" when the sync-delay experiment covers the run's broker
	// version, "as configured, not verified" otherwise; empty without
	// durability.
	Evidence string
	Workload string

	Publish Latency
	// Corrected is the publish latency from the intended send time
	// (corrected for coordinated omission); nil when the summary has none.
	Corrected *Latency
	// EndToEnd is nil for a produce-only run.
	EndToEnd *Latency

	PublishMsgPerSec float64
	PublishMBPerSec  float64
	ConsumeMBPerSec  float64
	Lost, Duplicates int64
	// NotConsumed is what slow subscriptions had not read when the final
	// drain ended (not lost).
	NotConsumed int64
}

// Table is a comparison of runs, one row each, in the order given.
type Table struct {
	Rows []Row
	// Warnings say what makes the runs unlike (different workloads, a
	// durability level not achieved, lost messages): a fair comparison
	// differs in the one setting under study only.
	Warnings []string
	// Flags mark every pair of runs whose comparison is unfair (see
	// Flags); compare --strict fails on any.
	Flags []Flag
	// Testbed is each run's slowest disk, topology and machines ("3
	// nodes on 1 machine"), in Rows' order (empty when no run has a
	// testbed).
	Testbed [][]string
	// BrokerResources are each run's broker totals over its measured
	// phase, in Rows' order (empty when no run has them): the resources
	// beside the latencies.
	BrokerResources [][]string
	// Cost is each run's efficiency and cost (costRows), in Rows' order;
	// empty when no run has a cost.
	Cost [][]string
	// LoadGenerator is each run's send delay p99 beside its publish p99
	// (toolDelayRows), in Rows' order: whose latency the figures are.
	LoadGenerator [][]string
	// BrokerJVM is how each run's brokers ran (where, Java, JVM options),
	// in Rows' order; empty when no run says.
	BrokerJVM [][]string
	// Security is each run's client security (SecurityLabel) and how it
	// checked the brokers' certificates, in Rows' order; empty when no run
	// recorded it.
	Security [][]string
	// Differences are, for each run after the first, whether it differs
	// from the first beyond the runs' own spread, figure by figure.
	Differences []Difference
	// Faults are the runs' faults side by side (faultColumns): per fault
	// index, each run's dip, recovery and worst p99, and the run's lost;
	// empty when no run had faults.
	Faults [][]string
}

// Difference is run B against run A (the first run compared): a verdict
// for each tested figure (results.Figures) from their repeats; or, when
// either was not repeated, CannotTell saying so once.
type Difference struct {
	A, B       string
	Verdicts   []significance.Verdict
	CannotTell string
}

// Different is how many figures B differs from A in.
func (d Difference) Different() int {
	n := 0
	for _, v := range d.Verdicts {
		if v.Outcome == significance.Different {
			n++
		}
	}
	return n
}

// singleRun is what compare says of runs that were not repeated.
const singleRun = "one run against one run cannot tell a difference from noise (on one quiet machine the same run's p50 varied 3.8x over four runs, docs/methodology.md): repeat each (streambench run --local --repeats 5) and compare the repeated runs"

// differences compares every run with the first.
func differences(runs []Named) ([]Difference, error) {
	var out []Difference
	for _, b := range runs[1:] {
		a := runs[0]
		d := Difference{A: a.Name, B: b.Name}
		if len(a.Summary.Repeats) < 2 || len(b.Summary.Repeats) < 2 {
			d.CannotTell = singleRun
			out = append(out, d)
			continue
		}
		for _, f := range results.Figures {
			if !f.Tested {
				continue
			}
			va, vb := a.Summary.RepeatValues(f), b.Summary.RepeatValues(f)
			if len(va) == 0 || len(vb) == 0 {
				continue // a figure one of them does not have (no consumers)
			}
			v, err := significance.Compare(f.Name, f.Better, va, vb, 0)
			if err != nil {
				return nil, err
			}
			d.Verdicts = append(d.Verdicts, v)
		}
		out = append(out, d)
	}
	return out, nil
}

// DifferentFigures is how many figures, over every pair, differ beyond
// the runs' spread: compare --fail-on-difference fails on any.
func (t Table) DifferentFigures() int {
	n := 0
	for _, d := range t.Differences {
		n += d.Different()
	}
	return n
}

// Compare tabulates runs as the durability study's Tables 2-2 to 2-5:
// Average, P50, P90, P99 and P999 of publish and end-to-end latency of the
// measured phase, plus throughput.
func Compare(runs []Named) (Table, error) { return CompareWith(runs, DefaultFairness) }

// CompareWith is Compare with the fairness tolerances given.
func CompareWith(runs []Named, f Fairness) (Table, error) {
	if len(runs) == 0 {
		return Table{}, errors.New("compare: no runs; give at least one results directory or run name")
	}
	var t Table
	seen := map[string]int{}
	for i, n := range runs {
		if n.Summary == nil {
			return Table{}, fmt.Errorf("compare: runs[%d] (%s) has no summary", i, n.Name)
		}
		if j, dup := seen[n.Name]; dup {
			return Table{}, fmt.Errorf("compare: runs[%d] and runs[%d] are both named %q; give each run its own name (results directory or BenchmarkRun)", j, i, n.Name)
		}
		seen[n.Name] = i
		t.Rows = append(t.Rows, row(n))
	}
	t.Warnings = warnings(runs)
	t.Flags = Flags(runs, f)
	var err error
	if t.Differences, err = differences(runs); err != nil {
		return Table{}, err
	}
	for _, n := range runs {
		if n.Summary.Testbed != nil {
			for _, m := range runs {
				fsync50, fsync99, write, topo := testbedCells(m.Summary)
				t.Testbed = append(t.Testbed, []string{m.Name, fsync50, fsync99, write, topo, machinesCell(m.Summary.Testbed)})
			}
			break
		}
	}
	t.BrokerResources = brokerResRows(runs)
	t.Cost = costRows(runs)
	t.Faults = faultRows(runs)
	t.LoadGenerator = toolDelayRows(runs, f)
	if slices.ContainsFunc(runs, func(n Named) bool { return n.Summary.Security != nil }) {
		for _, n := range runs {
			verification := "–"
			if sec := n.Summary.Security; sec != nil && tlsOn(sec) {
				verification = verificationText(sec.Verification)
			}
			t.Security = append(t.Security, []string{n.Name, SecurityLabel(n.Summary.Security), verification})
		}
	}
	if slices.ContainsFunc(runs, func(n Named) bool { return n.Summary.Brokers != nil || javaOf(n.Summary) != nil }) {
		for _, n := range runs {
			java := "unknown"
			if rt := javaOf(n.Summary); rt != nil {
				java = strings.TrimPrefix(javaruntime.String(rt), "Java ")
			}
			where, jvm := "–", "–"
			if b := n.Summary.Brokers; b != nil {
				where = b.Where
				if len(b.JVM) > 0 {
					jvm = strings.Join(b.JVM, " ")
				}
			}
			t.BrokerJVM = append(t.BrokerJVM, []string{n.Name, where, java, jvm})
		}
	}
	return t, nil
}

func row(n Named) Row {
	s := n.Summary
	r := s.Results
	pubCurve, corrCurve, e2eCurve := measureCurves(s, n.OMB)
	var ombPub, ombE2E results.QuantileMap
	if n.OMB != nil {
		ombPub, ombE2E = n.OMB.AggregatedPublishLatencyQuantiles, n.OMB.AggregatedEndToEndLatencyQuantiles
	}
	out := Row{
		Name: n.Name, System: s.System, Workload: s.Workload.Name,
		Publish: Latency{
			Avg: r.PublishLatencyMs.Avg, P50: r.PublishLatencyMs.P50,
			P90: p90(pubCurve, ombPub),
			P99: r.PublishLatencyMs.P99, P999: r.PublishLatencyMs.P999,
		},
		PublishMsgPerSec: r.PublishRateMsgPerSec, PublishMBPerSec: r.PublishMBPerSec, ConsumeMBPerSec: r.ConsumeMBPerSec,
		Lost: r.Lost, Duplicates: s.Duplicates, NotConsumed: r.NotConsumed,
	}
	if c := correctedOf(s); c != nil {
		out.Corrected = &Latency{Avg: c.Avg, P50: c.P50, P90: p90(corrCurve, nil), P99: c.P99, P999: c.P999}
	}
	if e := r.EndToEndLatencyMs; e != nil {
		out.EndToEnd = &Latency{Avg: e.Avg, P50: e.P50, P90: p90(e2eCurve, ombE2E), P99: e.P99, P999: e.P999}
	}
	if d := s.Durability; d != nil {
		out.RequestedLevel, out.AchievedLevel = d.RequestedLevel, d.AchievedLevel
		out.Evidence = dur.VerificationLabel(d)
	}
	return out
}

// p90 is not in the summary's headline (it follows status.results); the
// measured phase's quantile curve has it (percentiles 1..90 in steps of 1),
// and so has OMB's quantile map.
func p90(curve []results.CurvePoint, q results.QuantileMap) float64 {
	if v, ok := valueAt(curve, 90); ok {
		return v
	}
	if v, ok := valueAt(quantilePoints(q), 90); ok {
		return v
	}
	return math.NaN()
}

// valueAt is the value at percentile p: the value of the first point at or
// above p, as HdrHistogram's valueAtPercentile answers (never a value
// below the percentile's).
func valueAt(curve []results.CurvePoint, p float64) (float64, bool) {
	pts := append([]results.CurvePoint(nil), curve...)
	sort.Slice(pts, func(i, j int) bool { return pts[i].Percentile < pts[j].Percentile })
	for _, c := range pts {
		if c.Percentile >= p-1e-9 {
			return c.Ms, true
		}
	}
	return 0, false
}

func warnings(runs []Named) []string {
	var out []string
	// The workload knobs that change latency and throughput; a name alone
	// may differ (each run names its workload).
	type knobs struct {
		Topics, Partitions, Size, Producers, Subs, Consumers int64
		Rate                                                 int64
	}
	key := func(w v1alpha1.WorkloadSpec) knobs {
		k := knobs{Topics: int64(w.Topics), Partitions: int64(w.PartitionsPerTopic), Size: int64(w.MessageSize),
			Producers: int64(w.ProducersPerTopic), Consumers: int64(w.ConsumerPerSubscription), Rate: w.ProducerRate}
		if w.SubscriptionsPerTopic != nil {
			k.Subs = int64(*w.SubscriptionsPerTopic)
		}
		return k
	}
	first := key(runs[0].Summary.Workload)
	for _, n := range runs[1:] {
		if k := key(n.Summary.Workload); k != first {
			out = append(out, fmt.Sprintf("%s ran a different workload than %s (%s vs %s): compare like with like", n.Name, runs[0].Name, describe(k.Topics, k.Partitions, k.Size, k.Rate, k.Producers, k.Subs, k.Consumers), describe(first.Topics, first.Partitions, first.Size, first.Rate, first.Producers, first.Subs, first.Consumers)))
		}
	}
	for _, n := range runs {
		s := n.Summary
		if d := s.Durability; d != nil && d.AchievedLevel != d.RequestedLevel {
			out = append(out, fmt.Sprintf("%s: durability level %d requested, level %d achieved: %s", n.Name, d.RequestedLevel, d.AchievedLevel, nonEmpty(d.Explanation, "see its report")))
		}
		if s.Results.Lost > 0 {
			out = append(out, fmt.Sprintf("%s lost %s acknowledged messages", n.Name, count(s.Results.Lost)))
		}
		if s.Results.NotConsumed > 0 {
			out = append(out, fmt.Sprintf("%s: %s acknowledged messages were not consumed when its final drain ended (its consumers were still reading: slow, not lost); its consume rate and end-to-end latency cover only what was read", n.Name, count(s.Results.NotConsumed)))
		}
		if s.Results.Partial {
			out = append(out, fmt.Sprintf("%s: partial results: the run did not finish, its figures cover only what was measured before it stopped", n.Name))
		}
		if tb := s.Testbed; tb != nil && !disksMeasured(tb) {
			out = append(out, fmt.Sprintf("%s: testbed not measured (%s): its disks are not compared", n.Name, nonEmpty(tb.Note, "no probe result")))
		}
	}
	out = append(out, machinesWarnings(runs)...)
	// A Java version known for some runs only: the others' are not
	// compared (no flag), which the reader should know.
	if slices.ContainsFunc(runs, func(n Named) bool { return javaOf(n.Summary) != nil }) {
		for _, n := range runs {
			if javaOf(n.Summary) == nil {
				out = append(out, fmt.Sprintf("%s: the brokers' Java version is not known (%s): whether it matches the other runs' is not checked", n.Name, javaUnknownWhy(n.Summary)))
			}
		}
	}
	return out
}

func describe(topics, parts, size, rate, prod, subs, cons int64) string {
	r := "max rate"
	if rate > 0 {
		r = count(rate) + " msg/s"
	}
	return fmt.Sprintf("%d×%d partitions, %d B, %s, %d producers, %d subscriptions × %d consumers", topics, parts, size, r, prod, subs, cons)
}

// WriteText prints the table as the source studies' tables: publish latency,
// end-to-end latency, then throughput and durability; run names on the
// left, numbers right-aligned.
func (t Table) WriteText(w io.Writer) error {
	lat := func(get func(Row) *Latency) [][]string {
		rows := [][]string{{"", "Average", "P50", "P90", "P99", "P999"}}
		for _, r := range t.Rows {
			l := get(r)
			if l == nil {
				rows = append(rows, []string{r.Name, "–", "–", "–", "–", "–"})
				continue
			}
			rows = append(rows, []string{r.Name, ms(l.Avg), ms(l.P50), ms(l.P90), ms(l.P99), ms(l.P999)})
		}
		return rows
	}
	var b strings.Builder
	writeGrid(&b, "Publish latency, ack − send (ms)", lat(func(r Row) *Latency { return &r.Publish }))
	if t.hasCorrected() {
		b.WriteString("\n")
		writeGrid(&b, "Publish latency corrected for coordinated omission, ack − intended send (ms)", lat(func(r Row) *Latency { return r.Corrected }))
	}
	if t.hasEndToEnd() {
		b.WriteString("\n")
		writeGrid(&b, "End-to-end latency (ms)", lat(func(r Row) *Latency { return r.EndToEnd }))
	}
	if len(t.LoadGenerator) > 0 {
		b.WriteString("\n")
		writeGrid(&b, "Load generator (measured phase)", append([][]string{loadGeneratorColumns}, t.LoadGenerator...))
	}
	if len(t.Security) > 0 {
		b.WriteString("\n")
		writeGrid(&b, "Client security", append([][]string{{"", "security", "brokers' certificates"}}, t.Security...))
	}
	if len(t.BrokerJVM) > 0 {
		b.WriteString("\n")
		writeGrid(&b, "How the brokers ran", append([][]string{{"", "where", "Java", "JVM"}}, t.BrokerJVM...))
	}
	if len(t.BrokerResources) > 0 {
		b.WriteString("\n")
		writeGrid(&b, "Broker resources (measured phase, all brokers)", append([][]string{append([]string{"", "source"}, brokerResColumns...)}, t.BrokerResources...))
	}
	if len(t.Cost) > 0 {
		b.WriteString("\n")
		writeGrid(&b, "Efficiency and cost (summary.json's cost has each formula)", append([][]string{costColumns}, t.Cost...))
	}
	tp := [][]string{{"", "system", "level", "durability", "publish msg/s", "publish MB/s", "consume MB/s", "lost", "not consumed", "duplicates"}}
	for _, r := range t.Rows {
		tp = append(tp, []string{r.Name, string(r.System), r.levelText(), nonEmpty(r.Evidence, "–"),
			count(int64(math.Round(r.PublishMsgPerSec))), mbps(r.PublishMBPerSec), mbps(r.ConsumeMBPerSec), count(r.Lost), count(r.NotConsumed), count(r.Duplicates)})
	}
	b.WriteString("\n")
	writeGrid(&b, "Throughput", tp)
	if len(t.Faults) > 0 {
		b.WriteString("\n")
		writeGrid(&b, "Faults (times in the measured phase; lost is the fault's own, by the interval its messages were sent in)", append([][]string{faultColumns}, t.Faults...))
	}
	if len(t.Testbed) > 0 {
		b.WriteString("\n")
		writeGrid(&b, "Testbed (slowest probed volume)", append([][]string{{"", "fsync p50 ms", "fsync p99 ms", "write MB/s", "topology", "machines"}}, t.Testbed...))
	}
	for _, d := range t.Differences {
		fmt.Fprintf(&b, "\nB = %s against A = %s:\n", d.B, d.A)
		if d.CannotTell != "" {
			fmt.Fprintf(&b, "  cannot tell: %s\n", d.CannotTell)
		}
		for _, v := range d.Verdicts {
			fmt.Fprintf(&b, "  %s\n", v)
		}
	}
	for _, warn := range t.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", warn)
	}
	if len(t.Flags) > 0 {
		fmt.Fprintf(&b, "\nUnfair comparison: %d flags\n", len(t.Flags))
		for _, f := range t.Flags {
			fmt.Fprintf(&b, "flag %s\n", f)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeGrid prints a title and rows: the first column left-aligned, the
// others right-aligned, two spaces apart.
func writeGrid(b *strings.Builder, title string, rows [][]string) {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	b.WriteString(title + "\n")
	for _, r := range rows {
		var line strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i == 0 {
				line.WriteString(c + pad)
			} else {
				line.WriteString("  " + pad + c)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

// Text is WriteText into a string.
func (t Table) Text() string {
	var b strings.Builder
	_ = t.WriteText(&b)
	return b.String()
}

func (t Table) hasEndToEnd() bool {
	return slices.ContainsFunc(t.Rows, func(r Row) bool { return r.EndToEnd != nil })
}

func (t Table) hasCorrected() bool {
	return slices.ContainsFunc(t.Rows, func(r Row) bool { return r.Corrected != nil })
}

func (r Row) levelText() string {
	switch {
	case r.AchievedLevel == 0:
		return "–"
	case r.AchievedLevel != r.RequestedLevel:
		return fmt.Sprintf("%d (asked %d)", r.AchievedLevel, r.RequestedLevel)
	default:
		return fmt.Sprint(r.AchievedLevel)
	}
}

// comparePage is what the comparison template shows.
type comparePage struct {
	Title     string
	Generated string
	Warnings  []string
	Flags     []Flag
	Testbed   [][]string
	BrokerRes [][]string
	Cost      [][]string
	LoadGen   [][]string
	BrokerJVM [][]string
	Security  [][]string
	Faults    [][]string
	// Differences are Table.Differences.
	Differences []Difference
	Sections    []latencySection
	Rows        []compareRow
	Charts      []*chart
}

type latencySection struct {
	Title string
	Rows  []latencyCells
}

type latencyCells struct {
	Name  string
	Color string
	Cells []cell
}

type cell struct {
	Text string
	Best bool
}

type compareRow struct {
	Row
	Color                                      string
	Level, MsgPerSec, PubMB                    string
	ConsumeMB, LostText, NotConsText, DupsText string
	Bad                                        bool
}

// RenderCompare writes the comparison of runs as one HTML page: the
// tables of Compare and the runs' latency curves overlaid.
func RenderCompare(w io.Writer, runs []Named) error {
	return RenderCompareWith(w, runs, DefaultFairness)
}

// RenderCompareWith is RenderCompare with the fairness tolerances given.
func RenderCompareWith(w io.Writer, runs []Named, f Fairness) error {
	pg, err := comparePageOf(runs, f)
	if err != nil {
		return err
	}
	return compareTmpl.Execute(w, pg)
}

// comparePageOf is the tables and charts of a comparison.
func comparePageOf(runs []Named, f Fairness) (*comparePage, error) {
	t, err := CompareWith(runs, f)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(runs))
	for i, n := range runs {
		names[i] = n.Name
	}
	pg := &comparePage{
		Title:       "streambench comparison: " + strings.Join(names, ", "),
		Generated:   time.Now().UTC().Format("2006-01-02 15:04 MST"),
		Warnings:    t.Warnings,
		Flags:       t.Flags,
		Testbed:     t.Testbed,
		LoadGen:     t.LoadGenerator,
		BrokerJVM:   t.BrokerJVM,
		Security:    t.Security,
		BrokerRes:   t.BrokerResources,
		Cost:        t.Cost,
		Faults:      t.Faults,
		Differences: t.Differences,
	}
	color := func(i int) string { return runPalette[i%len(runPalette)] }
	pg.Sections = append(pg.Sections, latencySection{Title: "Publish latency, ack − send (ms)", Rows: latencyRows(t, color, func(r Row) *Latency { return &r.Publish })})
	if t.hasCorrected() {
		pg.Sections = append(pg.Sections, latencySection{Title: "Publish latency corrected for coordinated omission, ack − intended send (ms)", Rows: latencyRows(t, color, func(r Row) *Latency { return r.Corrected })})
	}
	if t.hasEndToEnd() {
		pg.Sections = append(pg.Sections, latencySection{Title: "End-to-end latency (ms)", Rows: latencyRows(t, color, func(r Row) *Latency { return r.EndToEnd })})
	}
	for i, r := range t.Rows {
		pg.Rows = append(pg.Rows, compareRow{
			Row: r, Color: color(i), Level: r.levelText(),
			MsgPerSec: count(int64(math.Round(r.PublishMsgPerSec))), PubMB: mbps(r.PublishMBPerSec), ConsumeMB: mbps(r.ConsumeMBPerSec),
			LostText: count(r.Lost), NotConsText: count(r.NotConsumed), DupsText: count(r.Duplicates), Bad: r.Lost > 0 || r.Duplicates > 0,
		})
	}

	var pub, e2e, p99 []line
	for i, n := range runs {
		pc, _, ec := measureCurves(n.Summary, n.OMB)
		var pn, en int64
		if m := phase(n.Summary, stats.PhaseMeasure); m != nil {
			pn, en = samples(m.PublishLatencyMs), samples(m.EndToEndLatencyMs)
		}
		dashed := i >= len(runPalette)
		pub = append(pub, line{Name: n.Name, Color: color(i), Dashed: dashed, XY: curveXY(pc, pn)})
		e2e = append(e2e, line{Name: n.Name, Color: color(i), Dashed: dashed, XY: curveXY(ec, en)})
		p99 = append(p99, line{Name: n.Name, Color: color(i), Dashed: dashed, XY: measureP99(n.Summary)})
	}
	for _, c := range []struct {
		id, title string
		lines     []line
	}{
		{"publish-quantiles", "Publish latency by percentile", pub},
		{"e2e-quantiles", "End-to-end latency by percentile", e2e},
	} {
		ch, err := quantileChart(c.id, c.title, c.lines, nil, wideW, wideH)
		if err != nil {
			return nil, err
		}
		if ch != nil {
			pg.Charts = append(pg.Charts, ch)
		}
	}
	lo, hi, _ := logRange(p99)
	logY := hi > 30*lo
	y := "ms"
	if logY {
		y += ", log scale"
	}
	ch, err := timeChart("publish-p99", "99th percentile publish latency over the measured phase", y, timeUnit{"s", 1}, nil, nil, p99, logY, wideW, halfH)
	if err != nil {
		return nil, err
	}
	if ch != nil {
		pg.Charts = append(pg.Charts, ch)
	}
	return pg, nil
}

// measureP99 is the publish p99 of each interval of the measured phase,
// against seconds since the phase started, so runs line up.
func measureP99(s *results.Summary) plotter.XYs {
	var xy plotter.XYs
	start := math.NaN()
	for _, p := range s.Series.Points {
		if p.Phase != stats.PhaseMeasure || p.PublishLatencyMs == nil || p.PublishLatencyMs.Count == 0 {
			continue
		}
		if math.IsNaN(start) {
			start = p.OffsetSeconds
		}
		xy = append(xy, plotter.XY{X: p.OffsetSeconds - start + p.Seconds/2, Y: math.Max(p.PublishLatencyMs.P99, msFloor)})
	}
	return xy
}

// latencyRows formats a latency table and marks the lowest value of each
// column.
func latencyRows(t Table, color func(int) string, get func(Row) *Latency) []latencyCells {
	cols := func(l *Latency) []float64 { return []float64{l.Avg, l.P50, l.P90, l.P99, l.P999} }
	best := []float64{math.Inf(1), math.Inf(1), math.Inf(1), math.Inf(1), math.Inf(1)}
	for _, r := range t.Rows {
		if l := get(r); l != nil {
			for j, v := range cols(l) {
				if !math.IsNaN(v) && v < best[j] {
					best[j] = v
				}
			}
		}
	}
	var out []latencyCells
	for i, r := range t.Rows {
		lc := latencyCells{Name: r.Name, Color: color(i)}
		l := get(r)
		for j := 0; j < 5; j++ {
			if l == nil {
				lc.Cells = append(lc.Cells, cell{Text: "–"})
				continue
			}
			v := cols(l)[j]
			lc.Cells = append(lc.Cells, cell{Text: ms(v), Best: len(t.Rows) > 1 && v == best[j]})
		}
		out = append(out, lc)
	}
	return out
}
