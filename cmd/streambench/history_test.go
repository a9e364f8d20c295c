package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/internal/archive"
	"github.com/streambench/streambench-operator/internal/archive/archivetest"
	"github.com/streambench/streambench-operator/internal/history"
	"github.com/streambench/streambench-operator/internal/results"
)

// writeArchive writes n nightly runs of a recorded Kafka summary into a
// directory as run --local leaves them (results/<run>/summary.json), the
// publish p99 of run i scaled by p99(i); the last run is repeated, so its
// repeats' own summaries are there too and must be passed over.
func writeArchive(t *testing.T, n int, p99 func(i int) float64) string {
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
	code, out := streambenchExit(t, "history", writeArchive(t, 10, steady), "--fail-on-regression")
	if code != 0 || !strings.Contains(out, "10 runs, nightly-00") || strings.Contains(out, "WORSE") {
		t.Fatalf("steady runs: exit %d:\n%s", code, out)
	}
	// The gate says what it tested at: --p-value over the figures.
	if !regexp.MustCompile(`gate, series \w+: each figure at p < 0\.00\d+ \(--p-value 0\.01 over [5-9] figures\), by 5 % or more: passed\n`).MatchString(out) {
		t.Errorf("steady runs: no gate line:\n%s", out)
	}
	slower := func(i int) float64 {
		if i >= 7 {
			return 1.4 * steady(i)
		}
		return steady(i)
	}
	code, out = streambenchExit(t, "history", writeArchive(t, 10, slower), "--fail-on-regression")
	if code == 0 || !strings.Contains(out, "--fail-on-regression: 1 figures regressed by 5 % or more") ||
		!strings.Contains(out, "publish p99 (ms)") || !strings.Contains(out, "run 8 (nightly-07): +") || !strings.Contains(out, "WORSE") {
		t.Fatalf("a slowdown from run 8: exit %d:\n%s", code, out)
	}
	// Above the threshold asked for, the same change is shown but not
	// failed on.
	if code, out = streambenchExit(t, "history", writeArchive(t, 10, slower), "--fail-on-regression", "--min-change", "0.6"); code != 0 {
		t.Fatalf("--min-change 0.6: exit %d:\n%s", code, out)
	}
}

// A nightly series' first slow run fails the gate, though no change point
// can be found with one run after it: three steady runs pass, a fourth 3×
// slower fails, named with its standing.
func TestHistoryGateFailsOnTheFirstSlowRun(t *testing.T) {
	p99 := func(i int) float64 {
		f := []float64{1, 1.02, 0.99, 1}[i]
		if i == 3 {
			f *= 3
		}
		return f
	}
	code, out := streambenchExit(t, "history", writeArchive(t, 3, p99), "--fail-on-regression")
	if code != 0 || !strings.Contains(out, "newest run nightly-02 against the series:\n    publish MB/s +0.0 % against the series' last segment of 2 runs: within the series' spread") {
		t.Fatalf("three steady runs: exit %d:\n%s", code, out)
	}
	dir := writeArchive(t, 4, p99)
	code, out = streambenchExit(t, "history", dir, "--fail-on-regression", "--html", filepath.Join(dir, "history.html"))
	standing := "publish p99 +199.0 % against the series' last segment of 3 runs"
	if code == 0 || !strings.Contains(out, "--fail-on-regression: 1 figures regressed by 5 % or more:\n  series ") ||
		!strings.Contains(out, "newest run nightly-03: "+standing) || !strings.Contains(out, "(529 ms → 1581 ms), outside its spread (p < 0.0001): worse") {
		t.Fatalf("a fourth run 3× slower: exit %d:\n%s", code, out)
	}
	// The page is written though the gate fails (a CI job keeps it), and
	// links each run's summary (these runs have no report.html).
	page, err := os.ReadFile(filepath.Join(dir, "history.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<a href="nightly-00/summary.json">`, `<a href="nightly-03/summary.json">`, "outside its spread"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page has no %q", want)
		}
	}
	if strings.Contains(string(page), "repeat-1") {
		t.Error("the page links a repeat's own results")
	}
}

// report --history: the run's report says how it stands against its
// series, whether the run is in the archive or joins it.
func TestReportAgainstItsSeries(t *testing.T) {
	dir := writeArchive(t, 4, func(i int) float64 { return []float64{1, 1.02, 0.99, 3}[i] })
	code, out := streambenchExit(t, "report", filepath.Join(dir, "nightly-03"), "--history", dir)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "nightly-03", "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Against its series", "1 worse", "run 4 of 4", "publish p99 &#43;199.0 % against the series&#39; last segment of 3 runs"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the report has no %q", want)
		}
	}
	// A run outside the archive joins its series as the newest; the
	// archive's first run alone is the first of its configuration.
	alone := writeArchive(t, 1, func(int) float64 { return 1 })
	if code, out = streambenchExit(t, "report", filepath.Join(dir, "nightly-02"), "--history", alone); code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	b, _ = os.ReadFile(filepath.Join(dir, "nightly-02", "report.html"))
	if !strings.Contains(string(b), "run 2 of 2") {
		t.Errorf("a run outside the archive is not its series' newest")
	}
	if code, out = streambenchExit(t, "report", filepath.Join(alone, "nightly-00"), "--history", alone); code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	b, _ = os.ReadFile(filepath.Join(alone, "nightly-00", "report.html"))
	if !strings.Contains(string(b), "The first run of its configuration") {
		t.Errorf("the only run of its configuration is not called the first")
	}
}

// The same gate over a real S3 server (versitygw): each run copied in by
// streambench archive, history reading the bucket back.
func TestHistoryGateOverAnS3Archive(t *testing.T) {
	endpoint, access, secret, bucket := archivetest.Start(t)
	t.Setenv("AWS_ACCESS_KEY_ID", access)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	p99 := func(i int) float64 { return []float64{1, 1.02, 0.99, 3}[i] }
	dir := writeArchive(t, 4, p99)
	url := "s3://" + bucket + "/nightly"
	for i := 0; i < 4; i++ {
		run := fmt.Sprintf("nightly-%02d", i)
		if code, out := streambenchExit(t, "archive", filepath.Join(dir, run), "--to", url, "--endpoint", endpoint, "--path-style"); code != 0 || !strings.Contains(out, "archived ") {
			t.Fatalf("archive %s: exit %d:\n%s", run, code, out)
		}
	}
	// Archived again: the same bytes are left, nothing fails.
	if code, out := streambenchExit(t, "archive", filepath.Join(dir, "nightly-00"), "--to", url, "--endpoint", endpoint, "--path-style"); code != 0 {
		t.Fatalf("archiving a run again: exit %d:\n%s", code, out)
	}
	page := filepath.Join(t.TempDir(), "history.html")
	code, out := streambenchExit(t, "history", url, "--endpoint", endpoint, "--path-style", "--fail-on-regression", "--html", page)
	if code == 0 || !strings.Contains(out, "newest run nightly-03: publish p99 +") || !strings.Contains(out, "4 runs, nightly-00") {
		t.Fatalf("the gate over %s: exit %d:\n%s", url, code, out)
	}
	// The page links each run to its object in the bucket, at the
	// endpoint: the temporary copy history read is gone.
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	links := map[string]bool{} // a chart per figure, each linking every run
	for _, l := range regexp.MustCompile(`href="([^"]+/summary\.json)"`).FindAllStringSubmatch(string(b), -1) {
		links[l[1]] = true
	}
	if len(links) != 4 {
		t.Fatalf("%d runs' summaries linked, want 4: %v", len(links), links)
	}
	store, err := archive.Open(t.Context(), archive.Location{Kind: archive.KindS3, Bucket: bucket, Prefix: "nightly"},
		archive.S3Options{Endpoint: endpoint, PathStyle: true, AccessKeyID: access, SecretAccessKey: secret})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := store.List(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	objects := map[string]bool{}
	for _, k := range keys {
		objects[endpoint+"/"+bucket+"/nightly/"+k] = true
	}
	for l := range links {
		if !objects[l] {
			t.Errorf("the page links %s, no object of the bucket (%v)", l, keys)
		}
	}
}

// The page's links: relative to the page for a directory, the object's
// URL at the endpoint for S3, under --link-base when given (kept
// relative when it is).
func TestRunLink(t *testing.T) {
	run := history.Run{Dir: "runs/local/r/20261203T020000Z", Report: true}
	for _, c := range []struct {
		name, arg, page, base string
		arch                  archiveFlags
		want                  string
	}{
		{"a directory", "/srv/archive", "/srv/archive/history.html", "", archiveFlags{}, "runs/local/r/20261203T020000Z/report.html"},
		{"a page elsewhere", "/srv/archive", "/srv/pages/h.html", "", archiveFlags{}, "../archive/runs/local/r/20261203T020000Z/report.html"},
		{"S3, path-style", "s3://bench/nightly", "/tmp/h.html", "", archiveFlags{endpoint: "http://minio:9000", pathStyle: true},
			"http://minio:9000/bench/nightly/runs/local/r/20261203T020000Z/report.html"},
		{"S3 under a base", "s3://bench/nightly", "/tmp/h.html", "https://bench.example.com/nightly/", archiveFlags{endpoint: "http://minio:9000"},
			"https://bench.example.com/nightly/runs/local/r/20261203T020000Z/report.html"},
		{"a relative base", "/srv/archive", "/tmp/h.html", "archive", archiveFlags{}, "archive/runs/local/r/20261203T020000Z/report.html"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("AWS_ENDPOINT_URL", "")
			link, err := runLink(c.arg, c.page, c.base, c.arch)
			if err != nil {
				t.Fatal(err)
			}
			if got := link(run); got != c.want {
				t.Errorf("%q, want %q", got, c.want)
			}
		})
	}
}
