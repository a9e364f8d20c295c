package report

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
)

// The testdata runs were recorded from real runs (local Kafka and Pulsar,
// the real coordinator and workers) by testdata/gen.
const (
	runFixed = "testdata/kafka-ack-all"
	runMixed = "testdata/kafka-mixed"
)

var comparedRuns = []string{"testdata/pulsar-ack-1", "testdata/pulsar-ack-2", "testdata/kafka-ack-1", "testdata/kafka-ack-all"}

// copyRun copies a recorded results directory into a temporary one, so
// RenderDir writes its report there. Files not in the source stay absent.
func copyRun(t *testing.T, src string, files ...string) string {
	t.Helper()
	if len(files) == 0 {
		files = []string{results.KeySummary, results.KeyOMB}
	}
	dir := t.TempDir()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func load(t *testing.T, dir string) Named {
	t.Helper()
	n, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// page is a parsed HTML page: the rows of each section's tables, keyed by
// the section's heading, and the charts.
type page struct {
	tables map[string][][]string
	charts map[string]chartInfo
	cards  map[string]string
	text   string
}

type chartInfo struct {
	svg    bool
	legend []string
}

func parsePage(t *testing.T, b []byte) page {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("report is not HTML: %v", err)
	}
	p := page{tables: map[string][][]string{}, charts: map[string]chartInfo{}, cards: map[string]string{}, text: textOf(doc)}
	walk(doc, func(n *html.Node) bool {
		switch {
		case n.Data == "section":
			title := ""
			walk(n, func(c *html.Node) bool {
				if c.Data == "h2" && title == "" {
					title = textOf(c)
				}
				if c.Data == "tr" {
					var row []string
					for td := c.FirstChild; td != nil; td = td.NextSibling {
						if td.Data == "td" || td.Data == "th" {
							row = append(row, cellText(td))
						}
					}
					p.tables[title] = append(p.tables[title], row)
				}
				return true
			})
		case n.Data == "figure" && attr(n, "class") == "chart":
			ci := chartInfo{}
			walk(n, func(c *html.Node) bool {
				if c.Data == "svg" {
					ci.svg = true
					return false
				}
				if attr(c, "class") == "legend" {
					for s := c.FirstChild; s != nil; s = s.NextSibling {
						ci.legend = append(ci.legend, textOf(s))
					}
					return false
				}
				return true
			})
			p.charts[attr(n, "id")] = ci
		case strings.HasPrefix(attr(n, "class"), "card"):
			var label, value string
			walk(n, func(c *html.Node) bool {
				switch attr(c, "class") {
				case "label":
					label = textOf(c)
				case "value":
					value = textOf(c)
				}
				return true
			})
			p.cards[label] = value
		}
		return true
	})
	return p
}

func walk(n *html.Node, f func(*html.Node) bool) {
	if !f(n) {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func textOf(n *html.Node) string {
	var b strings.Builder
	walk(n, func(c *html.Node) bool {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
		return c.Data != "style" && c.Data != "svg"
	})
	return strings.TrimSpace(b.String())
}

// cellText is a cell's text without its <small> note.
func cellText(n *html.Node) string {
	var b strings.Builder
	walk(n, func(c *html.Node) bool {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
		return c.Data != "small"
	})
	return strings.TrimSpace(b.String())
}

// row returns the table row whose first cell is name.
func (p page) row(t *testing.T, section, name string) []string {
	t.Helper()
	for _, r := range p.tables[section] {
		if len(r) > 0 && r[0] == name {
			return r
		}
	}
	t.Fatalf("section %q has no row %q; rows: %q", section, name, p.tables[section])
	return nil
}

func renderDir(t *testing.T, dir string) page {
	t.Helper()
	path, err := RenderDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(dir, FileName) {
		t.Errorf("RenderDir returned %s, want %s", path, filepath.Join(dir, FileName))
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	selfContained(t, b)
	return parsePage(t, b)
}

// selfContained fails when the page would load anything: no script,
// stylesheet link, image or frame source, and no url() in its CSS. (The
// browser test checks the requests the page really makes.)
func selfContained(t *testing.T, b []byte) {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		switch n.Data {
		case "script", "link", "img", "iframe", "object", "embed", "image", "use":
			t.Errorf("page has a <%s> element; it must be self-contained", n.Data)
		}
		for _, a := range n.Attr {
			if a.Key == "src" || a.Key == "href" || a.Key == "xlink:href" {
				t.Errorf("<%s %s=%q>: the page must load nothing", n.Data, a.Key, a.Val)
			}
		}
		if n.Data == "style" && strings.Contains(textOf(n.FirstChild), "url(") {
			t.Errorf("CSS loads a url()")
		}
		return true
	})
}

func TestRenderDirFromRealRun(t *testing.T) {
	dir := copyRun(t, runFixed)
	n := load(t, dir)
	s := n.Summary
	p := renderDir(t, dir)

	measure := phase(s, stats.PhaseMeasure)
	if measure == nil || measure.PublishLatencyMs == nil || measure.EndToEndLatencyMs == nil {
		t.Fatalf("recorded run lacks a measured phase with latencies: %+v", s.Phases)
	}
	lat := "Latency distribution, measured phase (ms)"
	if got := p.tables[lat][0]; strings.Join(got, "|") != "|count|avg|p50|p75|p95|p99|p99.9|p99.99|max" {
		t.Errorf("latency table header %q", got)
	}
	for name, d := range map[string]*results.LatencyDetail{
		"Publish":            measure.PublishLatencyMs,
		"Publish, corrected": measure.CorrectedLatencyMs,
		"Send delay":         measure.SendDelayMs,
		"End-to-end":         measure.EndToEndLatencyMs,
	} {
		want := []string{name, count(d.Count), ms(d.Avg), ms(d.P50), ms(d.P75), ms(d.P95), ms(d.P99), ms(d.P999), ms(d.P9999), ms(d.Max)}
		if got := p.row(t, lat, name); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("latency row %s:\n got %q\nwant %q", name, got, want)
		}
	}

	r := s.Results
	for label, want := range map[string]string{
		"Publish rate":      count(int64(math.Round(r.PublishRateMsgPerSec))) + "msg/s",
		"Consume rate":      mbps(r.ConsumeMBPerSec) + "MB/s",
		"Publish p99":       ms(r.PublishLatencyMs.P99) + "ms",
		"Corrected p99":     ms(measure.CorrectedLatencyMs.P99) + "ms",
		"End-to-end p99":    ms(r.EndToEndLatencyMs.P99) + "ms",
		"Lost / duplicates": count(r.Lost) + " / " + count(s.Duplicates),
	} {
		if got := p.cards[label]; got != want {
			t.Errorf("card %q = %q, want %q", label, got, want)
		}
	}
	if _, ok := p.cards["Backlog drain"]; ok {
		t.Errorf("a fixed-rate run has no drain card")
	}

	for key, want := range map[string]string{
		"Sent": count(r.Sent), "Acknowledged": count(r.Acked), "Received (all subscriptions)": count(r.Received),
		"Lost": count(r.Lost), "Duplicates": count(s.Duplicates),
	} {
		if got := p.row(t, "Messages", key); got[1] != want {
			t.Errorf("Messages %s = %q, want %q", key, got[1], want)
		}
	}

	d := s.Durability
	dur := "Durability in effect"
	if got := p.row(t, dur, "requested level")[1]; got != "2" || d.RequestedLevel != 2 {
		t.Errorf("requested level cell %q (summary %d)", got, d.RequestedLevel)
	}
	// The test data has no broker version, so the level is as configured.
	if got := p.row(t, dur, "established")[1]; got != "as configured, not verified" || d.Verification == v1alpha1.Verified {
		t.Errorf("established cell %q (summary verification %q)", got, d.Verification)
	}
	if got := p.row(t, dur, "replication")[1]; got != string(d.Replication) {
		t.Errorf("replication cell %q, want %s", got, d.Replication)
	}
	// Every effective setting of every component is listed.
	for k, v := range d.Kafka.Topic {
		if got := p.row(t, dur, k); got[1] != v {
			t.Errorf("topic setting %s = %q, want %q", k, got[1], v)
		}
	}
	for k, v := range d.Kafka.Producer {
		if got := p.row(t, dur, k); got[1] != v {
			t.Errorf("producer setting %s = %q, want %q", k, got[1], v)
		}
	}
	for k, v := range d.Kafka.Broker {
		if got := p.row(t, dur, k); got[1] != v {
			t.Errorf("broker setting %s = %q, want %q", k, got[1], v)
		}
	}
	if got := p.row(t, dur, "replication factor")[1]; got != "3" {
		t.Errorf("replication factor cell %q", got)
	}

	if got := p.row(t, "Workload", "message size")[1]; got != "1,024 bytes" {
		t.Errorf("workload message size %q", got)
	}
	if got := p.row(t, "Workload", "producer rate")[1]; got != count(s.Workload.ProducerRate)+" msg/s" {
		t.Errorf("workload producer rate %q", got)
	}
	for _, c := range s.ClockOffsets {
		if got := p.row(t, "Clock offsets", c.Worker); got[1] != signedMs(c.OffsetMs) {
			t.Errorf("clock offset of %s = %q, want %q", c.Worker, got[1], signedMs(c.OffsetMs))
		}
	}
	for _, note := range s.Notes {
		if !strings.Contains(p.text, note) {
			t.Errorf("note %q not in the report", note)
		}
	}
	if got := len(p.tables["Phases"]) - 1; got != len(s.Phases) {
		t.Errorf("phases table has %d rows, summary %d phases", got, len(s.Phases))
	}

	for id, legend := range map[string][]string{
		"latency-quantiles": {"publish", "publish, corrected for coordinated omission", "end-to-end"},
		"throughput-mb":     {"publish", "consume (all subscriptions)"},
		"throughput-msg":    {"publish", "consume (all subscriptions)"},
		"p99":               {"publish p99", "end-to-end p99"},
	} {
		c, ok := p.charts[id]
		if !ok || !c.svg {
			t.Errorf("chart %s missing or without SVG", id)
			continue
		}
		if strings.Join(c.legend, "|") != strings.Join(legend, "|") {
			t.Errorf("chart %s legend %q, want %q", id, c.legend, legend)
		}
	}
	if _, ok := p.charts["drain"]; ok {
		t.Errorf("a fixed-rate run has no drain chart")
	}
}

func signedMs(v float64) string { return funcs["signed"].(func(float64) string)(v) }

func TestRenderMixedRunShowsDrain(t *testing.T) {
	dir := copyRun(t, runMixed)
	s := load(t, dir).Summary
	if s.Results.CatchUp == nil || phase(s, stats.PhaseDrain) == nil {
		t.Fatalf("recorded mixed run has no drain: %+v", s.Results)
	}
	p := renderDir(t, dir)
	if c, ok := p.charts["drain"]; !ok || !c.svg {
		t.Fatalf("no drain chart in a mixed run's report (charts %v)", p.charts)
	}
	if got, want := p.cards["Backlog drain"], mbps(s.Results.CatchUp.DrainMBPerSec)+"MB/s"; got != want {
		t.Errorf("drain card %q, want %q", got, want)
	}
	lc := p.charts["latency-quantiles"].legend
	if lc[len(lc)-1] != "publish during the backlog drain" {
		t.Errorf("quantile chart legend %q lacks the drain's publish latency", lc)
	}
	d := phase(s, stats.PhaseDrain).PublishLatencyMs
	if got := p.row(t, "Latency distribution, measured phase (ms)", "Publish during drain"); got[6] != ms(d.P99) {
		t.Errorf("drain publish p99 cell %q, want %s", got[6], ms(d.P99))
	}
}

// Without omb-result.json (a summary copied out of status, or an older
// run) the report still has every table and the curves of the summary.
func TestRenderDirWithoutOMB(t *testing.T) {
	dir := copyRun(t, runFixed, results.KeySummary)
	n := load(t, dir)
	if n.OMB != nil {
		t.Fatal("Load invented an omb-result.json")
	}
	p := renderDir(t, dir)
	if c := p.charts["latency-quantiles"]; !c.svg {
		t.Errorf("no latency curves without omb-result.json")
	}
	if len(p.tables["Latency distribution, measured phase (ms)"]) < 5 {
		t.Errorf("latency table incomplete: %q", p.tables["Latency distribution, measured phase (ms)"])
	}
}

// A summary whose phases lost their curves falls back to OMB's quantile
// maps for the percentile chart.
func TestRenderCurvesFromOMB(t *testing.T) {
	n := load(t, runFixed)
	for i := range n.Summary.Phases {
		n.Summary.Phases[i].Curves = nil
	}
	pub, corr, e2e := measureCurves(n.Summary, n.OMB)
	if len(pub) == 0 || len(e2e) == 0 || corr != nil {
		t.Fatalf("curves from OMB: %d publish, %d e2e, %d corrected points", len(pub), len(e2e), len(corr))
	}
	if got, want := pub[len(pub)-1].Percentile, 100.0; got != want {
		t.Errorf("last OMB percentile %v, want %v (sorted)", got, want)
	}
	var buf bytes.Buffer
	if err := Render(&buf, n.Summary, n.OMB); err != nil {
		t.Fatal(err)
	}
	p := parsePage(t, buf.Bytes())
	if got := p.charts["latency-quantiles"].legend; strings.Join(got, "|") != "publish|end-to-end" {
		t.Errorf("legend %q, want publish and end-to-end only", got)
	}
}

// A summary with only the headline (status.results) renders its numbers
// and no charts.
func TestRenderHeadlineOnly(t *testing.T) {
	s := &results.Summary{
		Run: "bare", System: v1alpha1.SystemPulsar,
		Results: v1alpha1.ResultsSummary{
			PublishRateMsgPerSec: 1000, PublishMBPerSec: 1.024, ConsumeMBPerSec: 1.024,
			PublishLatencyMs: v1alpha1.LatencySummary{Avg: 2.5, P50: 2, P99: 9.876, P999: 20, P9999: 30, Max: 40},
			Sent:             10, Acked: 10, Received: 9, Lost: 1,
		},
		RateSearch: &results.RateSearch{RateMsgPerSec: 15000, LowMsgPerSec: 15000, HighMsgPerSec: 20000, Converged: true, Steps: []results.RateStep{
			{TargetMsgPerSec: 10000, PublishMsgPerSec: 9990, ConsumeMsgPerSec: 9980, Verdict: "sustainable"},
			{TargetMsgPerSec: 20000, PublishMsgPerSec: 17000, ConsumeMsgPerSec: 16000, Backlog: 30000, Pending: 1200, Verdict: "behind"},
		}, HoldSeconds: 35, MaxP99LatencyMs: 1000, Holds: []results.RateHold{
			{TargetMsgPerSec: 16000, Seconds: 36, PublishMsgPerSec: 15100, ConsumeMsgPerSec: 15000, PendingGrowth: 40000, CorrectedP99Ms: 2500, Verdict: "failed", Reason: "published 15100 of 16000 msg/s"},
			{TargetMsgPerSec: 15000, Seconds: 36, PublishMsgPerSec: 15000, ConsumeMsgPerSec: 15000, CorrectedP99Ms: 40, Verdict: "held"},
		}, Measured: &results.RateHeld{TargetMsgPerSec: 15000, PublishMsgPerSec: 12000, Reason: "published 12000 of 15000 msg/s"}},
		Truncation: &results.Truncation{SeriesStride: 2, SubscriptionsListed: 100},
	}
	var buf bytes.Buffer
	if err := Render(&buf, s, nil); err != nil {
		t.Fatal(err)
	}
	p := parsePage(t, buf.Bytes())
	if len(p.charts) != 0 {
		t.Errorf("charts without data: %v", p.charts)
	}
	row := p.row(t, "Latency distribution, measured phase (ms)", "Publish")
	if want := "Publish|–|2.50|2.00|–|–|9.88|20.00|30.00|40.00"; strings.Join(row, "|") != want {
		t.Errorf("headline-only latency row %q, want %q", strings.Join(row, "|"), want)
	}
	if !strings.Contains(p.text, "1 acknowledged messages were lost") {
		t.Errorf("no warning about the lost message")
	}
	if got := p.row(t, "Messages", "Lost"); got[1] != "1" {
		t.Errorf("lost %q", got[1])
	}
	if got := strings.Join(p.row(t, "Maximum-rate search", "1"), "|"); got != "1|20,000|17,000|16,000|30,000|1,200|0|behind" {
		t.Errorf("rate search step row %q", got)
	}
	if !strings.Contains(p.text, "Measured at 15,000 msg/s") || !strings.Contains(p.text, "lowest that fell behind 20,000 msg/s") {
		t.Errorf("rate search outcome missing")
	}
	if !strings.Contains(p.text, "held for 35 s as one window with its corrected p99 within 1000 ms") {
		t.Errorf("the hold and the latency bound are not stated")
	}
	if got := strings.Join(p.row(t, "Maximum-rate search", "16,000"), "|"); got != "16,000|36|15,100|15,000|40,000|0|2500|failed: published 15100 of 16000 msg/s" {
		t.Errorf("hold row %q", got)
	}
	if !strings.Contains(p.text, "The rate did not hold through the measured phase: published 12000 of 15000 msg/s.") {
		t.Errorf("the measured phase's failure to hold the rate is not reported")
	}
	if !strings.Contains(p.text, "each time-series point merges 2 intervals") || !strings.Contains(p.text, "were thinned") {
		t.Errorf("truncation not reported")
	}
}

// The Testbed section says when the page cache was dropped, and plainly
// when it was not.
func TestRenderPageCacheDrops(t *testing.T) {
	at := metav1.NewTime(time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC))
	s := &results.Summary{Run: "drops", System: v1alpha1.SystemKafka, Testbed: &v1alpha1.Testbed{
		Scope: v1alpha1.TestbedBrokerNodes, PageCacheDropped: &at,
		PageCacheDrops: []v1alpha1.PageCacheDrop{
			{Seq: 0, Reason: "before the load (warm-up and measured phase)", At: at, Dropped: true, Nodes: []string{"node-a", "node-b"}},
			{Seq: 1, Reason: "before the backlog drain (catch-up reads)", At: at, Message: "node node-b: Job x failed"},
		}}}
	var buf bytes.Buffer
	if err := Render(&buf, s, nil); err != nil {
		t.Fatal(err)
	}
	p := parsePage(t, buf.Bytes())
	for _, want := range []string{
		"dropped before the load (warm-up and measured phase) on node-a, node-b",
		"NOT dropped before the backlog drain (catch-up reads): node node-b: Job x failed",
	} {
		if !strings.Contains(p.text, want) {
			t.Errorf("report lacks %q:\n%s", want, p.text)
		}
	}
}

func TestRenderDirErrors(t *testing.T) {
	if _, err := RenderDir(t.TempDir()); err == nil || !strings.Contains(err.Error(), "summary.json") {
		t.Errorf("empty directory: %v, want an error naming summary.json", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, results.KeySummary), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := RenderDir(dir); err == nil || !strings.Contains(err.Error(), "summary.json") {
		t.Errorf("broken summary.json: %v", err)
	}
	dir = copyRun(t, runFixed, results.KeySummary)
	if err := os.WriteFile(filepath.Join(dir, results.KeyOMB), []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := RenderDir(dir); err == nil || !strings.Contains(err.Error(), "omb-result.json") {
		t.Errorf("broken omb-result.json: %v", err)
	}
	if err := Render(&bytes.Buffer{}, nil, nil); err == nil {
		t.Errorf("Render(nil) succeeded")
	}
}

func TestNinesAxis(t *testing.T) {
	for p, want := range map[float64]float64{0: 0, 90: 1, 99: 2, 99.9: 3, 99.99: 4, 99.9999: 6} {
		if got := nines(p); math.Abs(got-want) > 1e-9 {
			t.Errorf("nines(%v) = %v, want %v", p, got, want)
		}
	}
	var labels []string
	for _, tk := range (ninesTicks{}).Ticks(0, 4) {
		labels = append(labels, tk.Label)
	}
	if got, want := strings.Join(labels, " "), "0 50 90 99 99.9 99.99"; got != want {
		t.Errorf("nines ticks %q, want %q", got, want)
	}
	curve := []results.CurvePoint{{Percentile: 50, Ms: 0}, {Percentile: 99, Ms: 4}, {Percentile: 99.9, Ms: 5}, {Percentile: 99.99, Ms: 6}, {Percentile: 100, Ms: 9}}
	xy := curveXY(curve, 0)
	if len(xy) != 4 || xy[0].Y != msFloor || math.Abs(xy[1].X-2) > 1e-9 {
		t.Errorf("curveXY %v: want 0 ms raised to the floor and percentile 100 left out", xy)
	}
	// 500 samples resolve three nines (99.9), not four.
	if xy := curveXY(curve, 500); len(xy) != 3 || math.Abs(xy[2].X-3) > 1e-9 {
		t.Errorf("curveXY with 500 samples %v: want the curve to end at 99.9", xy)
	}
}

func TestLogTicks(t *testing.T) {
	labels := func(lo, hi float64) string {
		var l []string
		for _, tk := range (logTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				l = append(l, tk.Label)
			}
		}
		return strings.Join(l, " ")
	}
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{2, 50, "2 5 10 20 50"},
		{1, 5000, "1 2 5 10 20 50 100 200 500 1000 2000 5000"},
		// Five decades and more: powers of ten only, or the labels crowd.
		{0.5, 5000, "1 10 100 1000"},
		{0.001, 100000, "0.001 0.01 0.1 1 10 100 1000 10000 100000"},
	} {
		if got := labels(tc.lo, tc.hi); got != tc.want {
			t.Errorf("log ticks %v..%v = %q, want %q", tc.lo, tc.hi, got, tc.want)
		}
	}
	if lo, hi, _ := logRange([]line{{XY: curveXY([]results.CurvePoint{{Percentile: 1, Ms: 3.2}, {Percentile: 99, Ms: 61}}, 0)}}); lo != 2 || hi != 100 {
		t.Errorf("logRange(3.2, 61) = %v..%v, want 2..100", lo, hi)
	}
}

// A run that did not finish says so at the top of its report, and in
// compare.
func TestPartialResultsAreSaidToBe(t *testing.T) {
	s := &results.Summary{
		Run: "cut-short", System: v1alpha1.SystemKafka,
		Results: v1alpha1.ResultsSummary{Partial: true, PublishRateMsgPerSec: 100, Sent: 10, Acked: 10, Received: 10},
	}
	var buf bytes.Buffer
	if err := Render(&buf, s, nil); err != nil {
		t.Fatal(err)
	}
	if p := parsePage(t, buf.Bytes()); !strings.Contains(p.text, "Partial results: the run did not finish") {
		t.Error("the report of a partial run does not say it is partial")
	}
	whole := *s
	whole.Run, whole.Results.Partial = "whole", false
	tb, err := Compare([]Named{{Name: "cut-short", Summary: s}, {Name: "whole", Summary: &whole}})
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(tb.Warnings, "\n")
	if !strings.Contains(w, "cut-short: partial results") || strings.Contains(w, "whole: partial") {
		t.Errorf("compare warnings %q; want cut-short, and only it, said to be partial", w)
	}
}
