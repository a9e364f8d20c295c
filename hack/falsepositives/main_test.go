package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/results"
)

func TestTrials(t *testing.T) {
	for _, tc := range []struct {
		name string
		n, k int
		want []block
	}{
		{"one block of 5 against 5, A B B A A B B A A B", 10, 5, []block{{a: []int{0, 3, 4, 7, 8}, b: []int{1, 2, 5, 6, 9}}}},
		{"the remainder left out", 13, 3, []block{{a: []int{0, 3, 4}, b: []int{1, 2, 5}}, {a: []int{6, 9, 10}, b: []int{7, 8, 11}}}},
		{"too few for a trial", 9, 5, nil},
	} {
		if got := trials(tc.n, tc.k); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: trials(%d, %d) = %v, want %v", tc.name, tc.n, tc.k, got, tc.want)
		}
	}
}

// The bound printed beside the rate is the test's exact coverage: 5
// against 5 reach 96.8 %, so at most 3.2 % of one configuration's tests
// may say different.
func TestCoverage(t *testing.T) {
	if c := coverage(5); c < 0.967 || c > 0.969 {
		t.Errorf("coverage(5) = %v, want 0.968", c)
	}
}

// The gate mode judges each repeat as a night against the ones before
// it: a stationary series fails no night, one far-out night fails it
// alone, on the figure that moved.
func TestRunGate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		outlier  int // the night (0-based) whose p99 is ten times the rest; -1 none
		failures string
	}{
		{"stationary", -1, "0 of 5 nights"},
		{"one slow night", 6, "1 of 5 nights"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sum := results.Summary{System: v1alpha1.SystemKafka, Run: "fp"}
			for i := range 8 {
				r := v1alpha1.ResultsSummary{PublishMBPerSec: 2, PublishLatencyMs: v1alpha1.LatencySummary{P50: 3, P99: 10 + 0.1*float64(i%3), P999: 20}}
				if i == tc.outlier {
					r.PublishLatencyMs.P99 = 100
				}
				sum.Repeats = append(sum.Repeats, results.Repeat{Index: i + 1, Start: time.Date(2026, 12, 1+i, 2, 0, 0, 0, time.UTC), Results: r})
			}
			dir := writeSummary(t, sum)
			var out strings.Builder
			if err := runGate(&out, []string{dir}, 0.10, 0.01, 3); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), tc.failures) {
				t.Errorf("want %q in\n%s", tc.failures, out.String())
			}
			if tc.outlier >= 0 && !strings.Contains(out.String(), fmt.Sprintf("night %d: the gate fails on publish p99\n", tc.outlier+1)) {
				t.Errorf("night %d not failed on publish p99 alone:\n%s", tc.outlier+1, out.String())
			}
		})
	}
}

// A planted step of 2 on nights with 1 % of noise is found at the step
// in every latency figure of every series, and fails the gate on the
// first slowed night; the same nights unslowed have no change point.
func TestRunChangePoints(t *testing.T) {
	sum := results.Summary{System: v1alpha1.SystemKafka, Run: "fp"}
	for i := range 20 {
		n := 1 + 0.01*float64((i*7)%5-2)
		l := v1alpha1.LatencySummary{P50: 3 * n, P99: 10 * n, P999: 20 * n}
		e2e := l
		r := v1alpha1.ResultsSummary{PublishMBPerSec: 2, PublishLatencyMs: l, EndToEndLatencyMs: &e2e}
		sum.Repeats = append(sum.Repeats, results.Repeat{Index: i + 1, Start: time.Date(2026, 12, 1+i, 2, 0, 0, 0, time.UTC), Results: r})
	}
	dir := writeSummary(t, sum)
	var out strings.Builder
	if err := runChangePoints(&out, []string{dir}, 0.01, 0.10, 2, 10); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"0 change points in 20 nights of one configuration, 7 figures",
		"latency ×2 from night 6 of each series of 10 (2 series)",
		fmt.Sprintf("%-28s change point at the step in 2 of 2", "publish p99"),
		fmt.Sprintf("%-28s change point at the step in 2 of 2", "end-to-end p50"),
		"the gate failed the first slowed night in 2 of 2",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("want %q in\n%s", want, out.String())
		}
	}
}

// writeSummary writes sum as a repeated run's directory holds it.
func writeSummary(t *testing.T, sum results.Summary) string {
	t.Helper()
	dir := t.TempDir()
	b, err := json.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, results.KeySummary), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
