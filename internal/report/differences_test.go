package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/significance"
)

// repeated is a run of n repeats whose publish p99 is p99 times a spread
// that is the same for every run (so only p99 separates two of them).
func repeated(t *testing.T, name string, p99 float64, n int) Named {
	t.Helper()
	spread := []float64{1, 1.08, 0.95, 1.03, 0.98, 1.05}
	var reps []*results.Summary
	var dirs []string
	for i := 0; i < n; i++ {
		f := spread[i%len(spread)]
		reps = append(reps, summary(name, v1alpha1.SystemKafka, 2, v1alpha1.LatencySummary{Avg: 2, P50: 2 * f, P99: p99 * f, P999: 3 * p99 * f}, 3))
		dirs = append(dirs, "repeat-"+string(rune('1'+i)))
	}
	agg, err := results.Aggregate(reps, dirs)
	if err != nil {
		t.Fatal(err)
	}
	return Named{Name: name, Summary: agg}
}

func TestCompareDifferences(t *testing.T) {
	a, b, same := repeated(t, "a", 10, 5), repeated(t, "b", 7, 5), repeated(t, "a-again", 10, 5)
	tb, err := Compare([]Named{a, b, same})
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Differences) != 2 || tb.Differences[0].B != "b" || tb.Differences[1].B != "a-again" || tb.Differences[0].A != "a" {
		t.Fatalf("differences %+v: want b and a-again each against a", tb.Differences)
	}
	verdict := func(d Difference, figure string) significance.Verdict {
		for _, v := range d.Verdicts {
			if v.Figure == figure {
				return v
			}
		}
		t.Fatalf("no verdict on %q in %+v", figure, d.Verdicts)
		return significance.Verdict{}
	}
	if v := verdict(tb.Differences[0], "publish p99 (ms)"); v.Outcome != significance.Different || v.Ratio < 0.65 || v.Ratio > 0.75 {
		t.Errorf("b's p99 30 %% lower: %s", v)
	}
	// The throughput is the same in every repeat of both: no difference.
	if v := verdict(tb.Differences[0], "publish MB/s"); v.Outcome != significance.NoDifference {
		t.Errorf("equal throughput: %s", v)
	}
	if d := tb.Differences[1]; d.Different() != 0 {
		t.Errorf("a run against its own configuration differs in %d figures: %+v", d.Different(), d.Verdicts)
	}
	if tb.DifferentFigures() != tb.Differences[0].Different() || tb.DifferentFigures() < 2 {
		t.Errorf("%d figures differ in all, want b's p99 and p99.9 at least", tb.DifferentFigures())
	}
	for _, d := range tb.Differences {
		for _, v := range d.Verdicts {
			if !results.Figures[0].Tested && v.Figure == results.Figures[0].Name {
				t.Errorf("an untested figure has a verdict: %s", v)
			}
		}
	}
	var text bytes.Buffer
	if err := tb.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"B = b against A = a:", "publish p99 (ms): B's is 30 % lower, better", "no difference beyond the runs' own spread"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	var html bytes.Buffer
	if err := RenderCompare(&html, []Named{a, b}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), "b against a") || !strings.Contains(html.String(), "Mann-Whitney") {
		t.Errorf("the HTML comparison has no verdicts")
	}

	// Single runs: one sentence, no verdicts.
	tb, err = Compare(studyRuns()[:2])
	if err != nil {
		t.Fatal(err)
	}
	if d := tb.Differences[0]; d.CannotTell == "" || len(d.Verdicts) != 0 || !strings.Contains(d.CannotTell, "--repeats") {
		t.Errorf("single runs: %+v", d)
	}
}

// A repeated run's report shows each tested figure's median in its interval
// beside every repeat's value, and links each repeat's own report.
func TestReportOfARepeatedRun(t *testing.T) {
	n := repeated(t, "a", 10, 6)
	var b bytes.Buffer
	if err := Render(&b, n.Summary, nil); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{"Over 6 repeats", `href="repeat-3/report.html"`, "<td>publish p99 (ms)</td>", "9.5 – 10.8", "96.9 % confidence",
		// The percentile chart: the median curve, shaded by its interval.
		"Latency by percentile, measured phase, over 6 repeats", "publish, median", "its shaded band is that median&#39;s 96.9 % interval"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(html, "<td>publish avg (ms)</td>") {
		t.Error("an untested figure (the average) in the repeats' table")
	}
}
