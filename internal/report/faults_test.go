package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
)

// faultStart is the hand-built run's first snapshot; its measured phase
// starts 20 s later (two warm-up intervals).
var faultStart = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// faultRun is a run at 1000 msg/s: two warm-up intervals, then ten
// measured ones of 10 s, corrected p99 4 ms (publish 2 ms), with a stall
// at 50 s into the measured phase: an interval without an
// acknowledgement (30 failed sends), one at 400 msg/s and 800 ms, then
// 1000 msg/s at 5 ms.
func faultRun(faults ...v1alpha1.FaultStatus) *results.Summary {
	lat := func(p99 float64) *results.LatencyDetail {
		if p99 < 0 {
			return &results.LatencyDetail{}
		}
		return &results.LatencyDetail{Count: 1000, P99: p99}
	}
	pt := func(ph stats.Phase, off, rate, p99, errRate float64) results.SeriesPoint {
		return results.SeriesPoint{Phase: ph, OffsetSeconds: off, Seconds: 10, PublishRateMsgPerSec: rate,
			PublishErrorRateMsgPerSec: errRate, PublishLatencyMs: lat(p99 / 2), CorrectedLatencyMs: lat(p99)}
	}
	s := &results.Summary{Run: "faulty", System: v1alpha1.SystemKafka, Start: faultStart, End: faultStart.Add(120 * time.Second),
		Workload: v1alpha1.WorkloadSpec{ProducerRate: 1000}, Faults: faults, Duplicates: 7,
		Results: v1alpha1.ResultsSummary{Lost: 3},
		Phases:  []results.PhaseSummary{{Phase: stats.PhaseMeasure, PublishErrors: 42}}}
	s.Series.Points = []results.SeriesPoint{pt(stats.PhaseWarmup, 0, 1000, 4, 0), pt(stats.PhaseWarmup, 10, 1000, 4, 0)}
	rates := []float64{1000, 1000, 1000, 1000, 1000, 0, 400, 1000, 1000, 1000}
	p99s := []float64{4, 4, 4, 4, 4, -1, 800, 5, 5, 5}
	errs := []float64{0, 0, 0, 0, 0, 3, 0, 0, 0, 0}
	for i := range rates {
		s.Series.Points = append(s.Series.Points, pt(stats.PhaseMeasure, 20+10*float64(i), rates[i], p99s[i], errs[i]))
	}
	return s
}

// wall is the wall-clock time sec seconds into faultRun's measured phase.
func wall(sec float64) *metav1.MicroTime {
	t := metav1.NewMicroTime(faultStart.Add(time.Duration((20 + sec) * float64(time.Second))))
	return &t
}

func pause(index int32) v1alpha1.FaultStatus {
	return v1alpha1.FaultStatus{Index: index, Action: v1alpha1.FaultPause, Target: "broker-1", Resolved: "process kafka-2 (pid 18011)",
		Injected: true, InjectedAt: wall(50), ClearedAt: wall(60)}
}

func TestFaultsSection(t *testing.T) {
	recorded := pause(0)
	recorded.Impact = &v1alpha1.FaultImpact{IntervalSeconds: 10, InjectedSeconds: 48, ClearedSeconds: ptr.To(58.0), TargetRateMsgPerSec: 1000,
		LowestPublishRateMsgPerSec: 250, LowestRateFraction: 0.25, RecoveryIntervals: 3, RecoverySeconds: ptr.To(30.0), Relapses: 1,
		Recovered: true, StableRecoverySeconds: ptr.To(60.0), PublishErrors: 0, Lost: ptr.To[int64](3), Duplicates: 1, LatencySeries: "publish", WorstP99Ms: ptr.To(900.0)}
	gone := v1alpha1.FaultStatus{Index: 1, Action: v1alpha1.FaultKill, Target: "broker-2", Message: "broker-2: process kafka-3 not running"}
	repeated := pause(0)
	repeated.Repeat = 2
	noRate := faultRun(pause(0))
	noRate.Workload.ProducerRate = 0
	aggregate := faultRun(repeated)
	aggregate.Repeats = []results.Repeat{{Index: 1}, {Index: 2}}
	aggregate.Series = results.Series{}

	cases := []struct {
		name string
		s    *results.Summary
		// want is each row's fault, injected, cleared, dip, recovery,
		// failed sends / lost / duplicates, p99 before and worst p99.
		want     [][]string
		notes    [][]string // words each row's notes must hold
		series   string
		computed bool
	}{
		{"no impact recorded: computed from the series, on the corrected p99", faultRun(pause(0)),
			[][]string{{"#0", "50 s", "60 s (10 s later)", "0 msg/s (0 % of 1,000)", "20 s", "30 / – / 0", "4.00", "800.00"}},
			[][]string{nil}, "corrected (ack − intended send)", true},
		{"the record's impact is shown as recorded", faultRun(recorded),
			[][]string{{"#0", "48 s", "58 s (10 s later)", "250 msg/s (25 % of 1,000)", "30 s, 1 relapse, stable after 60 s", "0 / 3 / 1", "–", "900.00"}},
			[][]string{nil}, "publish (ack − send; the stalled sends are not counted)", false},
		{"a fault not injected says why and has no figures", faultRun(pause(0), gone),
			[][]string{{"#0", "50 s", "60 s (10 s later)", "0 msg/s (0 % of 1,000)", "20 s", "30 / – / 0", "4.00", "800.00"},
				{"#1", "not injected: broker-2: process kafka-3 not running", "–", "–", "–", "–", "–", "–"}},
			[][]string{nil, nil}, "corrected (ack − intended send)", true},
		{"a pause that never cleared", faultRun(func() v1alpha1.FaultStatus { f := pause(0); f.ClearedAt = nil; return f }()),
			[][]string{{"#0", "50 s", "not within the run", "0 msg/s (0 % of 1,000)", "20 s", "30 / – / 0", "4.00", "800.00"}},
			[][]string{nil}, "corrected (ack − intended send)", true},
		{"a repeated run's aggregate points to the repeat's report", aggregate,
			[][]string{{"#0, repeat 2", "10:01:10 UTC", "10:01:20 UTC", "–", "–", "–", "–", "–"}},
			[][]string{{"repeat 2's own report"}}, "", false},
		{"no target rate: no dip to measure", noRate,
			[][]string{{"#0", "50 s", "60 s (10 s later)", "–", "–", "–", "–", "–"}},
			[][]string{{"no target rate"}}, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := faultsSection(c.s)
			if v == nil {
				t.Fatal("no Faults section for a run with faults")
			}
			if len(v.Rows) != len(c.want) {
				t.Fatalf("%d rows, want %d", len(v.Rows), len(c.want))
			}
			for i, r := range v.Rows {
				got := []string{r.Fault, r.Injected, r.Cleared, r.Dip, r.Recovery, r.Errors, r.PreP99, r.WorstP99}
				if strings.Join(got, " | ") != strings.Join(c.want[i], " | ") {
					t.Errorf("row %d:\n got %q\nwant %q", i, got, c.want[i])
				}
				notes := strings.Join(r.Notes, "; ")
				for _, w := range c.notes[i] {
					if !strings.Contains(notes, w) {
						t.Errorf("row %d's notes %q lack %q", i, notes, w)
					}
				}
			}
			if v.Series != c.series || v.Computed != c.computed {
				t.Errorf("series %q computed %v, want %q %v", v.Series, v.Computed, c.series, c.computed)
			}
			// The delivery record is the run's, whatever the faults.
			want := []kv{{"acknowledged messages lost", "3", true}, {"duplicates", "7", true}, {"failed sends (publish errors)", "42", true}}
			for i, d := range v.Delivery {
				if d != want[i] {
					t.Errorf("delivery %d: %+v, want %+v", i, d, want[i])
				}
			}
		})
	}
	if v := faultsSection(faultRun()); v != nil {
		t.Errorf("a run without faults has a Faults section: %+v", v)
	}
}

func TestFaultMarks(t *testing.T) {
	notInjected := v1alpha1.FaultStatus{Index: 2, Action: v1alpha1.FaultKill, Target: "broker-0", Message: "run ended first"}
	kill := v1alpha1.FaultStatus{Index: 1, Action: v1alpha1.FaultKill, Target: "broker-2", Injected: true, InjectedAt: wall(70)}
	cases := []struct {
		name string
		s    *results.Summary
		u    timeUnit
		want []faultMark
	}{
		{"a pause from its injection to its clearing, on the run's time axis",
			faultRun(pause(0)), timeUnit{"s", 1}, []faultMark{{At: 70, Cleared: ptr.To(80.0), Label: "F0"}}},
		{"in minutes", faultRun(pause(0)), timeUnit{"min", 60}, []faultMark{{At: 70.0 / 60, Cleared: ptr.To(80.0 / 60), Label: "F0"}}},
		{"a kill not cleared has its injection only; a fault not injected no mark",
			faultRun(kill, notInjected), timeUnit{"s", 1}, []faultMark{{At: 90, Label: "F1"}}},
		{"no measured series: nothing to mark", func() *results.Summary { s := faultRun(pause(0)); s.Series = results.Series{}; return s }(),
			timeUnit{"s", 1}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := faultMarks(c.s, c.u)
			if len(got) != len(c.want) {
				t.Fatalf("%d marks %+v, want %+v", len(got), got, c.want)
			}
			for i := range got {
				g, w := got[i], c.want[i]
				if !near(g.At, w.At) || g.Label != w.Label || (g.Cleared == nil) != (w.Cleared == nil) || (g.Cleared != nil && !near(*g.Cleared, *w.Cleared)) {
					t.Errorf("mark %d: %+v (cleared %v), want %+v (cleared %v)", i, g, deref(g.Cleared), w, deref(w.Cleared))
				}
			}
		})
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// A cluster run's faults come from the BenchmarkRun's status, written
// beside its summary.json; the report shows them and marks them on every
// time chart.
func TestRenderFaultsFromStatusFile(t *testing.T) {
	dir := copyRun(t, runFixed)
	s := load(t, dir).Summary
	if len(s.Faults) != 0 {
		t.Fatal("the recorded run has faults already; the test needs one without")
	}
	start, ok := measureStart(s)
	if !ok {
		t.Fatal("the recorded run has no measured phase")
	}
	// Whole seconds, coarser than status.faults' microseconds: the
	// report must place a fault right without more.
	at := func(sec float64) *metav1.MicroTime {
		tt := metav1.NewMicroTime(s.Start.Add(time.Duration((start + sec) * float64(time.Second))).Truncate(time.Second))
		return &tt
	}
	offset := func(t *metav1.MicroTime) float64 { return t.Sub(s.Start).Seconds() - start }
	faults := []v1alpha1.FaultStatus{
		{Index: 0, Action: v1alpha1.FaultDeletePod, Target: "broker-1", Resolved: "streambench/kafka-broker-1", Injected: true, InjectedAt: at(30), ClearedAt: at(50),
			Message: "the pod came back as streambench/kafka-broker-1 on another node, its volume with it"},
		{Index: 1, Action: v1alpha1.FaultKill, Target: "leader", Message: "no leader of partition 0: the topic is gone"},
	}
	b, err := json.Marshal(faults)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, StatusFaultsFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	p := renderDir(t, dir)
	rows := p.tables["Faults"]
	if len(rows) < 3 {
		t.Fatalf("Faults section rows %q, want a header and two faults", rows)
	}
	del := p.row(t, "Faults", "#0")
	in, out := offset(faults[0].InjectedAt), offset(faults[0].ClearedAt)
	if del[1] != "DeletePod" || del[2] != "broker-1" || del[3] != "streambench/kafka-broker-1" ||
		del[4] != fmt.Sprintf("%.0f s", in) || del[5] != fmt.Sprintf("%.0f s (%.0f s later)", out, out-in) {
		t.Errorf("DeletePod row %q", del)
	}
	if !strings.Contains(del[6], "% of 4,000") {
		t.Errorf("the dip %q is not against the workload's 4,000 msg/s", del[6])
	}
	if got := p.row(t, "Faults", "#1")[4]; got != "not injected: no leader of partition 0: the topic is gone" {
		t.Errorf("the fault not injected says %q", got)
	}
	for _, want := range []string{"The run's delivery record, whole run", "a loss is placed in the interval its message was sent in", "acknowledged messages lost", "The p99 columns are the corrected (ack − intended send) latency"} {
		if !strings.Contains(p.text, want) {
			t.Errorf("the Faults section lacks %q", want)
		}
	}
	for _, id := range []string{"throughput-mb", "throughput-msg", "p99"} {
		if !slicesContains(p.charts[id].legend, "fault: injected (solid, F<index>) to cleared (dashed)") {
			t.Errorf("chart %s's legend %q has no fault mark", id, p.charts[id].legend)
		}
	}
	if !slicesContains(p.charts["p99"].legend, "publish p99, corrected (ack − intended send)") {
		t.Errorf("the p99 chart of a run with faults lacks the corrected p99: %q", p.charts["p99"].legend)
	}
	html, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(html, []byte(">F0<")); n != 3 {
		t.Errorf("F0 is drawn on %d charts, want the 3 time charts", n)
	}
	if bytes.Contains(html, []byte(">F1<")) {
		t.Error("the fault that was not injected is marked on a chart")
	}
	// A fault's notes take a row of their own across the table: in the
	// last column, which does not wrap, they ran out of the card.
	// The stall's explanation comes first (the pod was back 20 s later,
	// the longest wait 1.3 s: nothing explains it).
	if !regexp.MustCompile(`<tr class="notes"><td></td><td colspan="10"><small><strong>stall</strong>: writes stopped 1.3 s: matches none of the target&#39;s return 20 s</small><br><small>the pod came back as`).Match(html) {
		t.Error("fault #0's note is not in a row of its own under the fault")
	}
	// The run's failure tolerance, from its durability (RF 3, min ISR 2).
	if !bytes.Contains(html, []byte("<strong>Failure tolerance:</strong> the deployment rides out 1 broker lost: RF 3, min.insync.replicas 2 (acks=all)")) {
		t.Error("the Faults section does not say the deployment's failure tolerance")
	}
	if regexp.MustCompile(`<td class="n[^"]*">[^<]*<br><small>`).Match(html) {
		t.Error("a fault's notes are still in a numeric cell, which does not wrap")
	}

	// The same run without the file: no section, no marks.
	if err := os.Remove(filepath.Join(dir, StatusFaultsFile)); err != nil {
		t.Fatal(err)
	}
	p = renderDir(t, dir)
	if _, ok := p.tables["Faults"]; ok {
		t.Error("a run without faults has a Faults section")
	}
	if slicesContains(p.charts["p99"].legend, "fault: injected (solid, F<index>) to cleared (dashed)") {
		t.Error("a run without faults has fault marks")
	}
}

func slicesContains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestLoadStatusFaultsFile(t *testing.T) {
	dir := copyRun(t, runFixed)
	if err := os.WriteFile(filepath.Join(dir, StatusFaultsFile), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), StatusFaultsFile) {
		t.Errorf("a broken %s: error %v, want one naming the file", StatusFaultsFile, err)
	}
}

// TestFaultLines: the printed summary's faults, a line each with the
// report's figures, a fault not injected with why, and the notes below.
func TestFaultLines(t *testing.T) {
	gone := v1alpha1.FaultStatus{Index: 1, Action: v1alpha1.FaultKill, Target: "broker-2", Message: "broker-2: process kafka-3 not running"}
	noted := pause(0)
	noted.Message = "SIGCONT sent 2 s late"
	got := FaultLines(faultRun(noted, gone))
	want := []string{
		"#0 Pause broker-1 (process kafka-2 (pid 18011)) at 50 s, cleared 60 s (10 s later): lowest 0 msg/s (0 % of 1,000), recovered 20 s, failed / lost / duplicates 30 / – / 0, p99 4.00 ms before, 800.00 ms at worst",
		"  SIGCONT sent 2 s late",
		"#1 Kill broker-2: not injected: broker-2: process kafka-3 not running",
		"p99: the corrected (ack − intended send) latency",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("FaultLines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := FaultLines(faultRun()); got != nil {
		t.Errorf("a run without faults: %q", got)
	}
}
