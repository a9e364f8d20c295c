package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/internal/results"
)

// archive writes n nightly runs of a recorded Kafka summary into a
// directory as run --local leaves them (results/<run>/summary.json), the
// publish p99 of run i scaled by p99(i); the last run is repeated, so its
// repeats' own summaries are there too and must be passed over.
func archive(t *testing.T, n int, p99 func(i int) float64) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "report", "testdata", "kafka-ack-all", results.KeySummary))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	write := func(rel string, i int) {
		var s results.Summary
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		s.Run = fmt.Sprintf("nightly-%02d", i)
		s.Start = t0.Add(time.Duration(i) * 24 * time.Hour)
		s.Results.PublishLatencyMs.P99 *= p99(i)
		out, _ := json.Marshal(s)
		if err := os.MkdirAll(filepath.Join(dir, rel), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel, results.KeySummary), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		write(fmt.Sprintf("nightly-%02d", i), i)
	}
	// A repeat of the last run, ten times slower: counted only through its
	// run's summary.
	write(filepath.Join(fmt.Sprintf("nightly-%02d", n-1), results.RepeatDir(1)), n-1)
	return dir
}

func TestHistoryFailsOnARegression(t *testing.T) {
	steady := func(i int) float64 { return 1 + 0.02*float64(i%3) }
	code, out := streambenchExit(t, "history", archive(t, 10, steady), "--fail-on-regression")
	if code != 0 || !strings.Contains(out, "10 runs, nightly-00") || strings.Contains(out, "WORSE") {
		t.Fatalf("steady runs: exit %d:\n%s", code, out)
	}
	slower := func(i int) float64 {
		if i >= 7 {
			return 1.4 * steady(i)
		}
		return steady(i)
	}
	code, out = streambenchExit(t, "history", archive(t, 10, slower), "--fail-on-regression")
	if code == 0 || !strings.Contains(out, "--fail-on-regression: 1 figures regressed by 5 % or more") ||
		!strings.Contains(out, "publish p99 (ms)") || !strings.Contains(out, "run 8 (nightly-07): +") || !strings.Contains(out, "WORSE") {
		t.Fatalf("a slowdown from run 8: exit %d:\n%s", code, out)
	}
	// Above the threshold asked for, the same change is shown but not
	// failed on.
	if code, out = streambenchExit(t, "history", archive(t, 10, slower), "--fail-on-regression", "--min-change", "0.6"); code != 0 {
		t.Fatalf("--min-change 0.6: exit %d:\n%s", code, out)
	}
}
