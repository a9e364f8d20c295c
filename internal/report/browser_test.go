package report

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// screenshot, when set, is where TestReportInBrowser saves its full-page
// screenshot of the mixed run's report (the README's docs/report.png):
//
//	go test ./internal/report -run TestReportInBrowser -args -screenshot=$PWD/docs/report.png
var screenshot = flag.String("screenshot", "", "save the browser test's screenshot of the report to this PNG file")

// chromiumPath is Debian's chromium: the test drives the browser the
// distribution ships, installed by hack/install-chromium.sh.
const chromiumPath = "/usr/bin/chromium"

func ensureChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err == nil {
		return
	}
	script, err := filepath.Abs("../../hack/install-chromium.sh")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", script).CombinedOutput()
	if err != nil {
		t.Fatalf("%s is missing and %s could not install it: %v\n%s", chromiumPath, script, err, out)
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("%s ran but %s is still missing:\n%s", script, chromiumPath, out)
	}
}

// browser starts a headless chromium for the test and stops it at the end.
func browser(t *testing.T) context.Context {
	t.Helper()
	ensureChromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		// Without these, chromium keeps trying to reach its services and
		// this machine's closed network refuses it again and again.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	// The first Run starts the browser; it must not carry a timeout.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", chromiumPath, err)
	}
	return ctx
}

// pageProblems collects what the page reports as wrong, and every request
// it makes.
type pageProblems struct {
	mu       sync.Mutex
	errors   []string
	requests []string
}

func (p *pageProblems) listen(t *testing.T, ctx context.Context) {
	t.Helper()
	err := chromedp.Listen(ctx, func(ev any) {
		p.mu.Lock()
		defer p.mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				p.errors = append(p.errors, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " ")))
			}
		case *runtime.EventExceptionThrown:
			p.errors = append(p.errors, fmt.Sprintf("exception: %s (%s:%d)", ev.ExceptionDetails.Text, ev.ExceptionDetails.URL, ev.ExceptionDetails.LineNumber))
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
				p.errors = append(p.errors, fmt.Sprintf("log %s (%s): %s %s", ev.Entry.Level, ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
			}
		case *network.EventRequestWillBeSent:
			p.requests = append(p.requests, ev.Request.URL)
		case *network.EventLoadingFailed:
			p.errors = append(p.errors, "request failed: "+ev.ErrorText)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (p *pageProblems) check(t *testing.T, pageURL string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.errors {
		t.Errorf("browser reported: %s", e)
	}
	if len(p.requests) == 0 {
		t.Errorf("saw no request at all: the event listener is not working")
	}
	for _, r := range p.requests {
		if r != pageURL {
			t.Errorf("the page requested %s; a report must load nothing but itself", r)
		}
	}
}

// svgBox is what the browser laid out for one chart.
type svgBox struct {
	ID     string   `json:"id"`
	Width  float64  `json:"width"`
	Height float64  `json:"height"`
	Paths  int      `json:"paths"`
	Drawn  int      `json:"drawn"`
	Labels []string `json:"labels"`
}

// measureCharts asks the browser for each chart's rendered size, the number
// of its paths with a non-empty box, and the texts that have a visible box.
const measureCharts = `Array.from(document.querySelectorAll("figure.chart")).map(f => {
  const svg = f.querySelector("svg");
  if (!svg) return {id: f.id, width: 0, height: 0, paths: 0, drawn: 0, labels: []};
  const r = svg.getBoundingClientRect();
  const paths = Array.from(svg.querySelectorAll("path"));
  const drawn = paths.filter(p => { const b = p.getBBox(); return b.width > 0 || b.height > 0; }).length;
  const labels = Array.from(svg.querySelectorAll("text")).filter(t => {
    const b = t.getBoundingClientRect(); return b.width > 0 && b.height > 0 && getComputedStyle(t).visibility !== "hidden";
  }).map(t => t.textContent.trim());
  return {id: f.id, width: r.width, height: r.height, paths: paths.length, drawn: drawn, labels: labels};
})`

func openPage(t *testing.T, ctx context.Context, path string) (*pageProblems, string) {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	u := (&url.URL{Scheme: "file", Path: abs}).String()
	probs := &pageProblems{}
	probs.listen(t, ctx)
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.Navigate(u), chromedp.WaitReady(chromedp.CSS("footer"))); err != nil {
		t.Fatalf("opening %s: %v", u, err)
	}
	return probs, u
}

func chartsIn(t *testing.T, ctx context.Context) map[string]svgBox {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	boxes, err := chromedp.Run(tctx, chromedp.Evaluate[[]svgBox](measureCharts))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]svgBox{}
	for _, b := range boxes {
		out[b.ID] = b
	}
	return out
}

func hasLabels(t *testing.T, b svgBox, want ...string) {
	t.Helper()
	have := map[string]bool{}
	for _, l := range b.Labels {
		have[l] = true
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("chart %s: label %q not visible (visible: %q)", b.ID, w, b.Labels)
		}
	}
}

// TestReportInBrowser opens reports of recorded real runs in Debian's
// chromium and checks what a person would see: every chart laid out at a
// real size, with its lines drawn and its axis labels visible, no console
// error, and no request but the page itself.
func TestReportInBrowser(t *testing.T) {
	ctx := browser(t)

	t.Run("mixed run report", func(t *testing.T) {
		dir := copyRun(t, runMixed)
		path, err := RenderDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		probs, u := openPage(t, ctx, path)
		charts := chartsIn(t, ctx)
		want := []string{"latency-quantiles", "throughput-mb", "throughput-msg", "p99", "drain"}
		if len(charts) != len(want) {
			t.Errorf("browser shows %d charts, want %d: %v", len(charts), len(want), charts)
		}
		for _, id := range want {
			b, ok := charts[id]
			if !ok {
				t.Errorf("chart %s not in the page", id)
				continue
			}
			if b.Width < 300 || b.Height < 150 {
				t.Errorf("chart %s laid out at %.0f×%.0f px", id, b.Width, b.Height)
			}
			// Axes, grid and at least one data line.
			if b.Drawn < 4 {
				t.Errorf("chart %s: %d of %d paths drawn", id, b.Drawn, b.Paths)
			}
		}
		hasLabels(t, charts["latency-quantiles"], "percentile", "latency (ms, log scale)", "50", "90", "99", "99.9")
		hasLabels(t, charts["throughput-mb"], "time since start (s)", "MB/s", "measure")
		hasLabels(t, charts["throughput-msg"], "msg/s")
		hasLabels(t, charts["drain"], "backlog (MB)", "backlog-build")
		probs.check(t, u)

		tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		img, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(img))
		if err != nil {
			t.Fatalf("screenshot is not a PNG: %v", err)
		}
		if cfg.Width != 1280 || cfg.Height < 2000 {
			t.Errorf("screenshot %d×%d px: want the full 1280 px wide page", cfg.Width, cfg.Height)
		}
		if *screenshot != "" {
			if err := os.WriteFile(*screenshot, img, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("wrote %s (%d×%d)", *screenshot, cfg.Width, cfg.Height)
		}
	})

	t.Run("suite page", func(t *testing.T) {
		// A suite's directory as local mode or `report <suite>` lays it
		// out: suite.json and a directory per cell.
		dir := t.TempDir()
		idx := SuiteIndex{Suite: "matrix", Comparisons: []SuiteGroup{
			{Workload: "lat", AchievedLevel: 2, Cells: []string{"matrix-kafka-l2-lat", "matrix-pulsar-l2-lat"}},
		}}
		for cell, src := range map[string]string{"matrix-kafka-l2-lat": "testdata/kafka-ack-all", "matrix-pulsar-l2-lat": "testdata/pulsar-ack-2"} {
			if err := os.CopyFS(filepath.Join(dir, cell), os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			idx.Cells = append(idx.Cells, v1alpha1.SuiteCell{Name: cell, Workload: "lat", RequestedLevel: 2, AchievedLevel: 2, Phase: v1alpha1.CellSucceeded})
		}
		raw, err := json.Marshal(idx)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, SuiteFile), raw, 0o644); err != nil {
			t.Fatal(err)
		}
		path, err := RenderSuiteDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		probs, u := openPage(t, ctx, path)
		charts := chartsIn(t, ctx)
		for _, id := range []string{"publish-quantiles", "e2e-quantiles", "publish-p99"} {
			if b := charts[id]; b.Width < 300 || b.Height < 120 || b.Drawn < 5 {
				t.Errorf("chart %s laid out at %.0f×%.0f px with %d paths drawn", id, b.Width, b.Height, b.Drawn)
			}
		}
		// The tables and the charts of one comparison side by side.
		tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		side, err := chromedp.Run(tctx, chromedp.Evaluate[[]float64](`(() => {
  const g = document.querySelector("section .grid2.side");
  const t = g.children[0].getBoundingClientRect();
  const c = g.children[1].querySelector("figure.chart").getBoundingClientRect();
  return [t.right, c.left, t.top, c.top];
})()`))
		if err != nil {
			t.Fatal(err)
		}
		if side[1] < side[0] || side[3] != side[2] {
			t.Errorf("charts are not beside the tables: tables end at x %.0f, charts start at x %.0f; tables start at y %.0f, charts at y %.0f", side[0], side[1], side[2], side[3])
		}
		probs.check(t, u)
	})

	t.Run("comparison", func(t *testing.T) {
		var runs []Named
		for _, d := range comparedRuns {
			runs = append(runs, load(t, d))
		}
		path := filepath.Join(t.TempDir(), "compare.html")
		var buf bytes.Buffer
		if err := RenderCompare(&buf, runs); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		probs, u := openPage(t, ctx, path)
		charts := chartsIn(t, ctx)
		for _, id := range []string{"publish-quantiles", "e2e-quantiles", "publish-p99"} {
			b := charts[id]
			if b.Width < 300 || b.Height < 150 {
				t.Errorf("chart %s laid out at %.0f×%.0f px", id, b.Width, b.Height)
			}
			// Axes and grid, plus one line per run.
			if b.Drawn < 3+len(runs) {
				t.Errorf("chart %s: %d paths drawn, want at least one line for each of %d runs", id, b.Drawn, len(runs))
			}
		}
		hasLabels(t, charts["publish-quantiles"], "percentile", "latency (ms, log scale)", "99.9")
		probs.check(t, u)
	})
}
