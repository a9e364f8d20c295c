package history

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/streambench/streambench-operator/internal/changepoint"
	"github.com/streambench/streambench-operator/internal/results"
)

var p99Figure, mbFigure = figure("publish p99"), figure("publish MB/s")

func figure(name string) Figure {
	for _, f := range Figures {
		if f.Name == name {
			return f
		}
	}
	panic(name)
}

func TestStand(t *testing.T) {
	for _, c := range []struct {
		name    string
		f       Figure
		seg     []float64
		x       float64
		verdict Verdict
		// low, high: the interval, 0 when not checked.
		low, high float64
		text      string
	}{
		// mean 4.1, s 0.1; t(2, 0.995) = 9.925: 4.1 ± 9.925 · 0.1 · √(4/3).
		{"within", p99Figure, []float64{4.0, 4.1, 4.2}, 4.5, Within, 4.1 - 1.146, 4.1 + 1.146,
			"publish p99 +9.8 % against the series' last segment of 3 runs: within the series' spread"},
		{"worse", p99Figure, []float64{4.0, 4.1, 4.2}, 12.3, Worse, 0, 0,
			"publish p99 +200.0 % against the series' last segment of 3 runs (4.10 ms → 12.3 ms), outside its spread (p 0.0002): worse"},
		{"lower latency is better", p99Figure, []float64{4.0, 4.1, 4.2, 4.0, 4.1, 4.2}, 2.0, Better, 0, 0,
			"publish p99 -51.2 % against the series' last segment of 6 runs (4.10 ms → 2.00 ms), outside its spread (p < 0.0001): better"},
		{"less throughput is worse", mbFigure, []float64{100, 101, 99, 100}, 50, Worse, 0, 0,
			"publish MB/s -50.0 % against the series' last segment of 4 runs (100 MB/s → 50.0 MB/s), outside its spread (p < 0.0001): worse"},
		{"more throughput is better", mbFigure, []float64{100, 101, 99, 100}, 150, Better, 0, 0, ": better"},
		// One run has no spread: the change is said, not judged.
		{"one run", p99Figure, []float64{4.0}, 8.0, TooFew, 0, 0,
			"publish p99 +100.0 % against the series' last segment of 1 run (4.00 ms → 8.00 ms): too few runs to tell (a spread needs 2)"},
		{"none before", p99Figure, nil, 8.0, NoneBefore, 0, 0, "publish p99 8.00 ms: no earlier run of its configuration has it"},
		// A segment that never varied: its own value is within, any
		// other outside.
		{"constant, same", mbFigure, []float64{100, 100, 100}, 100, Within, 100, 100, "+0.0 %"},
		{"constant, other", mbFigure, []float64{100, 100, 100}, 99, Worse, 100, 100, "(p < 0.0001): worse"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := stand(c.f, c.seg, c.x, 0.01)
			if st.Verdict != c.verdict {
				t.Errorf("verdict %q, want %q (p %g, interval %g..%g)", st.Verdict, c.verdict, st.PValue, st.Low, st.High)
			}
			if c.high != 0 && (math.Abs(st.Low-c.low) > 0.002 || math.Abs(st.High-c.high) > 0.002) {
				t.Errorf("interval %g..%g, want %g..%g", st.Low, st.High, c.low, c.high)
			}
			// Outside the interval exactly when the p-value is under
			// alpha.
			if len(c.seg) > 1 && (st.Value < st.Low || st.Value > st.High) != (st.PValue < 0.01) {
				t.Errorf("value %g, interval %g..%g, p %g: the two disagree", st.Value, st.Low, st.High, st.PValue)
			}
			st.Segment = make([]int, len(c.seg))
			if !strings.Contains(st.String(), c.text) {
				t.Errorf("%s\nwant it to contain\n%s", st, c.text)
			}
		})
	}
}

// The interval's coverage is what it claims: of stationary normal
// series, a new run lies outside in alpha of them, whatever the
// segment's length.
func TestStandCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 1))
	for _, n := range []int{2, 3, 5, 10} {
		for _, alpha := range []float64{0.01, 0.05} {
			const trials = 20000
			outside := 0
			seg := make([]float64, n)
			for range trials {
				for i := range seg {
					seg[i] = 100 + 5*rng.NormFloat64()
				}
				if stand(p99Figure, seg, 100+5*rng.NormFloat64(), alpha).PValue < alpha {
					outside++
				}
			}
			got := float64(outside) / trials
			// Three binomial standard deviations.
			if tol := 3 * math.Sqrt(alpha*(1-alpha)/trials); math.Abs(got-alpha) > tol {
				t.Errorf("segments of %d at alpha %g: %.4f outside, want %g ± %.4f", n, alpha, got, alpha, tol)
			}
		}
	}
}

// A latency or a throughput is never negative, so a segment of n runs
// with mean m has a sample SD of at most √n · m (all of it in one run):
// a new value beyond m · (1 + t(n−1, 1−α/2) · √(n+1)) is outside the
// interval whatever the segment's spread. That bound is what makes the
// nightly e2e's slowed fourth night fail its gate on a machine however
// busy (3 runs, 8 figures, each at 0.01 / 8: 57.5 times the mean), and it
// must keep holding.
func TestStandBeyondAnySpread(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 2))
	for _, alpha := range []float64{0.01, 0.01 / 8} {
		for _, n := range []int{2, 3, 5} {
			tq := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(1 - alpha/2)
			bound := 1 + tq*math.Sqrt(float64(n+1))
			for trial := range 2000 {
				seg := make([]float64, n)
				var mean float64
				for i := range seg {
					// Spreads from none to the most a positive segment
					// has: every value but one near 0 in some trials.
					seg[i] = 100 * math.Pow(rng.Float64(), float64(1+trial%8))
					mean += seg[i] / float64(n)
				}
				if trial%10 == 0 {
					for i := range seg {
						seg[i] = 0
					}
					seg[0], mean = 100*float64(n), 100
				}
				if st := stand(p99Figure, seg, mean*bound*1.0001, alpha); st.Verdict != Worse {
					t.Fatalf("segment %v (mean %g, SD %g), alpha %g: %g is %q (p %g), want worse beyond %.2f times the mean",
						seg, mean, st.SD, alpha, st.Value, st.Verdict, st.PValue, bound)
				}
			}
			if want := map[float64]float64{0.01: 20.85, 0.01 / 8: 57.5}[alpha]; n == 3 && math.Abs(bound-want) > 0.05 {
				t.Errorf("3 runs at %g: the bound is %.3f times the mean, the nightly e2e counts on %g", alpha, bound, want)
			}
		}
	}
	// The bound is tight: a value just under it, against the widest
	// segment, is within.
	if st := stand(p99Figure, []float64{300, 0, 0}, 100*20.8, 0.01); st.Verdict != Within {
		t.Errorf("20.8 times the mean against {300, 0, 0}: %q, want within", st.Verdict)
	}
}

// series is n nightly runs of the recorded Kafka run, each changed by
// edit(i, summary), analysed.
func series(t *testing.T, n int, edit func(i int, s *results.Summary)) Series {
	t.Helper()
	base := recorded(t, "kafka-ack-all")
	t0 := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	var runs []Run
	for i := range n {
		b, _ := json.Marshal(base)
		var s results.Summary
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		s.Run = fmt.Sprintf("nightly-%02d", i)
		edit(i, &s)
		runs = append(runs, Run{Name: s.Run, Dir: s.Run, Start: t0.Add(time.Duration(i) * 24 * time.Hour), Summary: &s})
	}
	all := Analyze(Group(runs), changepoint.Options{})
	if len(all) != 1 {
		t.Fatalf("%d series of one configuration", len(all))
	}
	return all[0]
}

// Stand's segment starts at the track's last change point before the
// run; a run at a change point is compared with the segment before it.
func TestStandSegments(t *testing.T) {
	s := series(t, 12, func(i int, s *results.Summary) {
		f := wobble(i)
		if i >= 6 {
			f *= 1.5
		}
		s.Results.PublishLatencyMs.P99 *= f
	})
	var track Track
	for _, tr := range s.Tracks {
		if tr.Figure.Name == "publish p99" {
			track = tr
		}
	}
	if len(track.Changes) != 1 || track.Changes[0].Run != 6 {
		t.Fatalf("changes %+v, want one at run 7", track.Changes)
	}
	p99 := func(st Standings) Standing {
		for _, f := range st.Figures {
			if f.Figure.Name == "publish p99" {
				return f
			}
		}
		t.Fatalf("no publish p99 standing in %+v", st)
		return Standing{}
	}
	newest := p99(Newest(s, 0.01))
	if fmt.Sprint(newest.Segment) != "[6 7 8 9 10]" || newest.ChangeHere || newest.Verdict != Within {
		t.Errorf("newest: segment %v, change here %t, %s; want runs 7-11, within", newest.Segment, newest.ChangeHere, newest)
	}
	at := p99(Stand(s, 6, 0.01))
	if fmt.Sprint(at.Segment) != "[0 1 2 3 4 5]" || !at.ChangeHere || at.Verdict != Worse || !strings.HasSuffix(at.String(), ": worse; change point here") {
		t.Errorf("run 7: segment %v, change here %t, %s; want runs 1-6, worse, a change point", at.Segment, at.ChangeHere, at)
	}
	first := Stand(s, 0, 0.01)
	if first.Name != "nightly-00" || len(first.Figures) == 0 || first.Figures[0].Verdict != First {
		t.Errorf("first run: %+v", first)
	}
}

func TestGate(t *testing.T) {
	steady := func(i int, s *results.Summary) {
		s.Results.PublishLatencyMs.P99 *= wobble(i)
		s.Results.PublishMBPerSec *= wobble(i + 5)
	}
	fourth := func(factor float64, mb bool) func(i int, s *results.Summary) {
		return func(i int, s *results.Summary) {
			steady(i, s)
			switch {
			case i == 3 && mb:
				s.Results.PublishMBPerSec *= factor
			case i == 3:
				s.Results.PublishLatencyMs.P99 *= factor
			}
		}
	}
	for _, c := range []struct {
		name string
		runs int
		edit func(int, *results.Summary)
		// fails is the figure that fails, "" when none does.
		fails, text string
	}{
		{"stationary noisy series", 12, steady, "", ""},
		{"three runs", 3, fourth(3, false), "", ""},
		{"a fourth 3× slower", 4, fourth(3, false), "publish p99",
			"series " + ConfigOf(recorded(t, "kafka-ack-all")).Key() + ", newest run nightly-03: publish p99 +2"},
		{"a fourth at a third of the throughput", 4, fourth(1.0/3, true), "publish MB/s", "publish MB/s -66."},
		{"a fourth 3× faster", 4, fourth(1.0/3, false), "", ""},
		{"a fourth 3 % slower", 4, fourth(1.03, false), "", ""},
		// A change point that made the figure worse fails as before.
		{"a slowdown 3 runs old", 12, func(i int, s *results.Summary) {
			steady(i, s)
			if i >= 9 {
				s.Results.PublishLatencyMs.P99 *= 1.3
			}
		}, "publish p99", "from run 10 on"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Gate([]Series{series(t, c.runs, c.edit)}, 0.05, 0.01)
			if c.fails == "" {
				if len(got) != 0 {
					t.Errorf("fails on %v, want none", got)
				}
				return
			}
			if len(got) != 1 || got[0].Figure != c.fails || !strings.Contains(got[0].String(), c.text) {
				t.Errorf("fails on %v, want %s alone, saying %q", got, c.fails, c.text)
			}
		})
	}
}

// The gate's alpha is the whole gate's: each of a series' k figures is
// tested at alpha / k. A newest run whose p99 alone has p 0.004 is worse
// than its segment at 0.01 but does not fail a gate of 0.01 over the
// figures; at p 0.0002 it does.
func TestGateCorrectsForItsFigures(t *testing.T) {
	seg := []float64{1, 1.02, 0.98, 1.01, 0.99, 1.03, 0.97, 1, 1.02, 0.98}
	var mean, sd float64
	for _, v := range seg {
		mean += v / float64(len(seg))
	}
	for _, v := range seg {
		sd += (v - mean) * (v - mean) / float64(len(seg)-1)
	}
	sd = math.Sqrt(sd)
	tq := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(seg) - 1)}
	for _, c := range []struct {
		p     float64
		fails bool
	}{{0.004, false}, {0.0002, true}} {
		x := mean + tq.Quantile(1-c.p/2)*sd*math.Sqrt(1+1/float64(len(seg)))
		s := series(t, len(seg)+1, func(i int, s *results.Summary) {
			f := x
			if i < len(seg) {
				f = seg[i]
			}
			s.Results.PublishLatencyMs.P99 *= f
		})
		each := FigureAlpha(s, 0.01)
		if k := 0.01 / each; k < 5 {
			t.Fatalf("the recorded run has %g figures, the test needs more", k)
		}
		st := Newest(s, 0.01)
		for _, f := range st.Figures {
			if f.Figure.Name == "publish p99" && (f.Verdict != Worse || math.Abs(f.PValue-c.p) > c.p/100) {
				t.Fatalf("p99 at p %g: %q with p %g, want worse at 0.01", c.p, f.Verdict, f.PValue)
			}
		}
		got := Gate([]Series{s}, 0.05, 0.01)
		if (len(got) > 0) != c.fails {
			t.Errorf("p99 at p %g, each figure at %.5f: gate fails on %v, want failing %v", c.p, each, got, c.fails)
		}
	}
}
