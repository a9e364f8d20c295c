package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
)

func i32(v int32) *int32 { return &v }

// summary builds a summary with the headline latencies of the study's (docs/methodology.md) Table
// 2-2 row and a measured-phase curve whose percentile 90 is p90.
func summary(name string, sys v1alpha1.System, level v1alpha1.Level, pub v1alpha1.LatencySummary, p90 float64) *results.Summary {
	curve := []results.CurvePoint{{Percentile: 50, Ms: pub.P50}, {Percentile: 89, Ms: p90 * 0.9}, {Percentile: 90, Ms: p90}, {Percentile: 91, Ms: p90 * 1.1}, {Percentile: 99, Ms: pub.P99}}
	return &results.Summary{
		Run: name, System: sys,
		Workload:   v1alpha1.WorkloadSpec{Name: "latency", Topics: 1, PartitionsPerTopic: 100, MessageSize: 1024, ProducerRate: 200000, ProducersPerTopic: 1, SubscriptionsPerTopic: i32(1), ConsumerPerSubscription: 1},
		Durability: &v1alpha1.EffectiveDurability{RequestedLevel: level, AchievedLevel: level},
		Results: v1alpha1.ResultsSummary{
			PublishRateMsgPerSec: 200000, PublishMBPerSec: 204.8, ConsumeMBPerSec: 204.8,
			PublishLatencyMs: pub,
			Sent:             1000, Acked: 1000, Received: 1000,
		},
		Phases: []results.PhaseSummary{{Phase: stats.PhaseMeasure, Curves: &results.Curves{PublishLatencyMs: curve}}},
	}
}

// verified marks a summary's durability as established by the sync-delay
// experiment on version, as durability.TranslateFor does.
func verified(s *results.Summary, version string) *results.Summary {
	d := s.Durability
	d.BrokerVersion, d.Verification = version, v1alpha1.Verified
	if s.System == v1alpha1.SystemPulsar {
		d.Pulsar = &v1alpha1.PulsarDurability{}
	} else {
		d.Kafka = &v1alpha1.KafkaDurability{}
	}
	return s
}

// studyRuns are the rows of the durability study's Table 2-2.
func studyRuns() []Named {
	lat := func(avg, p50, p99, p999 float64) v1alpha1.LatencySummary {
		return v1alpha1.LatencySummary{Avg: avg, P50: p50, P99: p99, P999: p999}
	}
	return []Named{
		{Name: "pulsar-ack-1", Summary: summary("pulsar-ack-1", v1alpha1.SystemPulsar, 3, lat(3.23, 3.21, 4.73, 5.89), 4.23)},
		{Name: "pulsar-ack-2", Summary: verified(summary("pulsar-ack-2", v1alpha1.SystemPulsar, 1, lat(3.64, 3.42, 10.37, 32.74), 4.47), "4.0.7")},
		{Name: "kafka-ack-1", Summary: summary("kafka-ack-1", v1alpha1.SystemKafka, 3, lat(2.54, 1.99, 11.37, 18.71), 3.78)},
		{Name: "kafka-ack-all", Summary: verified(summary("kafka-ack-all", v1alpha1.SystemKafka, 1, lat(9.84, 5.71, 58.83, 164.20), 19.7), "4.3.1")},
	}
}

func TestCompareStudyTable(t *testing.T) {
	tb, err := Compare(studyRuns())
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{
		{3.23, 3.21, 4.23, 4.73, 5.89},
		{3.64, 3.42, 4.47, 10.37, 32.74},
		{2.54, 1.99, 3.78, 11.37, 18.71},
		{9.84, 5.71, 19.7, 58.83, 164.20},
	}
	for i, r := range tb.Rows {
		got := []float64{r.Publish.Avg, r.Publish.P50, r.Publish.P90, r.Publish.P99, r.Publish.P999}
		for j := range got {
			if got[j] != want[i][j] {
				t.Errorf("%s column %d = %v, want %v", r.Name, j, got[j], want[i][j])
			}
		}
		if r.EndToEnd != nil {
			t.Errorf("%s: end-to-end row without end-to-end latency", r.Name)
		}
	}
	if len(tb.Warnings) != 0 {
		t.Errorf("like runs gave warnings: %q", tb.Warnings)
	}

	// The text is the study's table: a header, then one line per run in the
	// order given, cells right-aligned.
	lines := strings.Split(tb.Text(), "\n")
	if strings.TrimSpace(lines[0]) != "Publish latency, ack − send (ms)" {
		t.Errorf("first line %q", lines[0])
	}
	if got := strings.Fields(lines[1]); strings.Join(got, " ") != "Average P50 P90 P99 P999" {
		t.Errorf("header %q", lines[1])
	}
	for i, want := range []string{
		"pulsar-ack-1 3.23 3.21 4.23 4.73 5.89",
		"pulsar-ack-2 3.64 3.42 4.47 10.37 32.74",
		"kafka-ack-1 2.54 1.99 3.78 11.37 18.71",
		"kafka-ack-all 9.84 5.71 19.70 58.83 164.20",
	} {
		if got := strings.Join(strings.Fields(lines[2+i]), " "); got != want {
			t.Errorf("line %d = %q, want %q", 2+i, got, want)
		}
	}
	if strings.Contains(tb.Text(), "End-to-end") {
		t.Errorf("end-to-end table printed for produce-only runs")
	}
	// The durability column says how each level was established.
	text := strings.Join(strings.Fields(tb.Text()), " ")
	for _, row := range []string{
		"kafka-ack-all kafka 1 verified for Kafka 4.3.1 (where syncs fall) 200,000 204.8 204.8 0 0",
		"kafka-ack-1 kafka 3 as configured, not verified 200,000",
		"pulsar-ack-2 pulsar 1 verified for Pulsar 4.0.7 (where syncs fall) 200,000",
	} {
		if !strings.Contains(text, row) {
			t.Errorf("throughput row %q missing:\n%s", row, tb.Text())
		}
	}
}

func TestP90Sources(t *testing.T) {
	base := func() *results.Summary {
		return summary("r", v1alpha1.SystemKafka, 2, v1alpha1.LatencySummary{P50: 1, P99: 9}, 5)
	}
	omb := &results.OMBResult{
		AggregatedPublishLatencyQuantiles:  results.QuantileMap{50: 1, 90: 6, 99: 9},
		AggregatedEndToEndLatencyQuantiles: results.QuantileMap{50: 2, 90: 7.5, 99: 12},
	}
	for _, tc := range []struct {
		name       string
		mod        func(*results.Summary)
		omb        *results.OMBResult
		pub, e2e   float64
		wantE2ERow bool
	}{
		{name: "summary curve", mod: func(*results.Summary) {}, pub: 5},
		{name: "summary curve wins over OMB", mod: func(*results.Summary) {}, omb: omb, pub: 5},
		{name: "OMB map when the summary has no curves", mod: func(s *results.Summary) { s.Phases = nil }, omb: omb, pub: 6},
		{name: "no source", mod: func(s *results.Summary) { s.Phases = nil }, pub: math.NaN()},
		{
			name: "no exact 90: the next percentile above",
			mod: func(s *results.Summary) {
				s.Phases[0].Curves.PublishLatencyMs = []results.CurvePoint{{Percentile: 95, Ms: 8}, {Percentile: 85, Ms: 3}}
			},
			pub: 8,
		},
		{
			name: "end-to-end from OMB",
			mod: func(s *results.Summary) {
				s.Results.EndToEndLatencyMs = &v1alpha1.LatencySummary{P50: 2, P99: 12}
			},
			omb: omb, pub: 5, e2e: 7.5, wantE2ERow: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base()
			tc.mod(s)
			tb, err := Compare([]Named{{Name: "r", Summary: s, OMB: tc.omb}})
			if err != nil {
				t.Fatal(err)
			}
			r := tb.Rows[0]
			if !(r.Publish.P90 == tc.pub || math.IsNaN(r.Publish.P90) && math.IsNaN(tc.pub)) {
				t.Errorf("publish P90 = %v, want %v", r.Publish.P90, tc.pub)
			}
			if (r.EndToEnd != nil) != tc.wantE2ERow {
				t.Fatalf("end-to-end row %+v, want present=%v", r.EndToEnd, tc.wantE2ERow)
			}
			if r.EndToEnd != nil && r.EndToEnd.P90 != tc.e2e {
				t.Errorf("end-to-end P90 = %v, want %v", r.EndToEnd.P90, tc.e2e)
			}
			if math.IsNaN(tc.pub) && !strings.Contains(tb.Text(), "–") {
				t.Errorf("unknown P90 not shown as –:\n%s", tb.Text())
			}
		})
	}
}

func TestCompareWarningsAndErrors(t *testing.T) {
	runs := studyRuns()
	runs[1].Summary.Workload.MessageSize = 100
	runs[2].Summary.Durability.AchievedLevel = 4
	runs[2].Summary.Durability.Explanation = "no fsync per message"
	runs[3].Summary.Results.Lost = 12
	tb, err := Compare(runs)
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(tb.Warnings, "\n")
	for _, want := range []string{"pulsar-ack-2 ran a different workload than pulsar-ack-1", "100 B", "kafka-ack-1: durability level 3 requested, level 4 achieved: no fsync per message", "kafka-ack-all lost 12"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q:\n%s", want, w)
		}
	}
	if len(tb.Warnings) != 3 {
		t.Errorf("%d warnings, want 3: %q", len(tb.Warnings), tb.Warnings)
	}
	if got := tb.Rows[2].levelText(); got != "4 (asked 3)" {
		t.Errorf("level text %q", got)
	}
	if !strings.Contains(tb.Text(), "warning: kafka-ack-all lost 12") {
		t.Errorf("text lacks the warnings:\n%s", tb.Text())
	}

	if _, err := Compare(nil); err == nil {
		t.Errorf("Compare(nil) succeeded")
	}
	dup := studyRuns()
	dup[3].Name = "pulsar-ack-1"
	if _, err := Compare(dup); err == nil || !strings.Contains(err.Error(), `runs[0] and runs[3] are both named "pulsar-ack-1"`) {
		t.Errorf("duplicate names: %v", err)
	}
	if _, err := Compare([]Named{{Name: "x"}}); err == nil || !strings.Contains(err.Error(), "runs[0] (x) has no summary") {
		t.Errorf("missing summary: %v", err)
	}
}

// The recorded runs: P90 lies between P50 and P99 and equals OMB's
// quantile map at 90.0; the HTML has the tables and one curve per run.
func TestCompareRealRuns(t *testing.T) {
	var runs []Named
	for _, d := range comparedRuns {
		runs = append(runs, load(t, d))
	}
	tb, err := Compare(runs)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range tb.Rows {
		omb := runs[i].OMB
		for _, c := range []struct {
			kind string
			l    *Latency
			q    results.QuantileMap
		}{{"publish", &r.Publish, omb.AggregatedPublishLatencyQuantiles}, {"end-to-end", r.EndToEnd, omb.AggregatedEndToEndLatencyQuantiles}} {
			if c.l == nil {
				t.Fatalf("%s: no %s latency", r.Name, c.kind)
			}
			if !(c.l.P50 <= c.l.P90 && c.l.P90 <= c.l.P99) {
				t.Errorf("%s %s: P50 %v, P90 %v, P99 %v out of order", r.Name, c.kind, c.l.P50, c.l.P90, c.l.P99)
			}
			if c.l.P90 != c.q[90] {
				t.Errorf("%s %s: P90 %v, OMB's quantile map says %v", r.Name, c.kind, c.l.P90, c.q[90])
			}
		}
		if r.Name != runs[i].Summary.Run {
			t.Errorf("row %d named %s, want %s", i, r.Name, runs[i].Summary.Run)
		}
	}

	var buf bytes.Buffer
	if err := RenderCompare(&buf, runs); err != nil {
		t.Fatal(err)
	}
	selfContained(t, buf.Bytes())
	p := parsePage(t, buf.Bytes())
	const pubSec, corrSec = "Publish latency, ack − send (ms)", "Publish latency corrected for coordinated omission, ack − intended send (ms)"
	for _, sec := range []string{pubSec, corrSec, "End-to-end latency (ms)"} {
		rows := p.tables[sec]
		if len(rows) != 1+len(runs) {
			t.Fatalf("%s: %d rows, want header + %d", sec, len(rows), len(runs))
		}
		if strings.Join(rows[0], "|") != "|Average|P50|P90|P99|P999" {
			t.Errorf("%s header %q", sec, rows[0])
		}
		for i, r := range tb.Rows {
			var l Latency
			switch sec {
			case pubSec:
				l = r.Publish
			case corrSec:
				if r.Corrected == nil {
					t.Fatalf("%s: no corrected latency (the summaries' measured phases have it)", r.Name)
				}
				l = *r.Corrected
				if l.P99 < r.Publish.P99-0.05 {
					t.Errorf("%s: corrected p99 %v below publish p99 %v: it counts from the intended send time (at most the pacer's 50 µs after it)", r.Name, l.P99, r.Publish.P99)
				}
			default:
				l = *r.EndToEnd
			}
			want := []string{r.Name, ms(l.Avg), ms(l.P50), ms(l.P90), ms(l.P99), ms(l.P999)}
			if strings.Join(rows[1+i], "|") != strings.Join(want, "|") {
				t.Errorf("%s row %d = %q, want %q", sec, i, rows[1+i], want)
			}
		}
	}
	names := strings.Join(comparedNames(runs), "|")
	for _, id := range []string{"publish-quantiles", "e2e-quantiles", "publish-p99"} {
		c := p.charts[id]
		if !c.svg || strings.Join(c.legend, "|") != names {
			t.Errorf("chart %s: svg %v, legend %q, want %q", id, c.svg, c.legend, names)
		}
	}
	if got := p.row(t, "Throughput and durability", "kafka-ack-all")[2]; got != "2" {
		t.Errorf("kafka-ack-all durability level cell %q, want 2", got)
	}
}

func comparedNames(runs []Named) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.Name)
	}
	return out
}
