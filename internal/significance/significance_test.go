package significance

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/combin"

	"github.com/streambench/streambench-operator/internal/stats"
)

// The exact null distribution of U, counted by recursion, is the one found
// by enumerating every order of n a's and m b's (gonum's combinations).
func TestRankSumCountsEveryOrder(t *testing.T) {
	for _, c := range [][2]int{{1, 1}, {1, 4}, {2, 3}, {4, 4}, {5, 5}, {3, 7}, {6, 4}} {
		n, m := c[0], c[1]
		counts := make([]float64, n*m+1)
		total := 0.0
		// Positions 0..n+m-1 in ascending order of value; the
		// combination is where the a's are.
		g := combin.NewCombinationGenerator(n+m, n)
		pos := make([]int, n)
		for g.Next() {
			g.Combination(pos)
			u := 0
			for i, p := range pos {
				u += p - i // the b's below this a
			}
			counts[u]++
			total++
		}
		r := newRankSum(n, m)
		s := 0.0
		for u := range counts {
			s += counts[u] / total
			if math.Abs(r.cdf(u)-s) > 1e-12 {
				t.Errorf("n=%d m=%d: P(U <= %d) = %v, enumeration gives %v", n, m, u, r.cdf(u), s)
			}
		}
	}
}

func TestCompare(t *testing.T) {
	cases := []struct {
		name     string
		better   Better
		a, b     []float64
		level    float64
		outcome  Outcome
		says     string
		ratio    [2]float64 // bounds on the estimate
		coverage float64
	}{
		{
			name: "B clearly lower latency", better: LowerIsBetter,
			a: []float64{10, 11, 9.5, 10.5, 10.2}, b: []float64{7, 7.5, 7.2, 6.9, 7.1},
			outcome: Different, says: "% lower, better", ratio: [2]float64{0.65, 0.75}, coverage: 1 - 2*4.0/252,
		},
		{
			name: "B higher throughput", better: HigherIsBetter,
			a: []float64{100, 98, 103, 101}, b: []float64{120, 118, 125, 121},
			outcome: Different, says: "% higher, better", ratio: [2]float64{1.15, 1.25}, coverage: 1 - 2*1.0/70,
		},
		{
			name: "B higher latency is worse", better: LowerIsBetter,
			a: []float64{5, 5.2, 4.9, 5.1, 5, 5.3}, b: []float64{6, 6.4, 6.1, 5.9, 6.2, 6.3},
			outcome: Different, says: "% higher, worse", ratio: [2]float64{1.1, 1.3},
		},
		{
			name: "overlapping repeats", better: LowerIsBetter,
			a: []float64{10, 12, 9, 11, 10.5}, b: []float64{10.2, 11.5, 9.4, 10.8, 10.1},
			outcome: NoDifference, says: "no difference beyond the runs' own spread", ratio: [2]float64{0.9, 1.1},
		},
		{
			name: "ties everywhere", better: LowerIsBetter,
			a: []float64{4, 4, 4, 4}, b: []float64{4, 4, 4, 4},
			outcome: NoDifference, ratio: [2]float64{1, 1},
		},
		{
			name: "single runs", better: LowerIsBetter,
			a: []float64{10}, b: []float64{7},
			outcome: CannotTell, says: "spec.repeats",
		},
		{
			name: "three against three cannot reach 95 %", better: LowerIsBetter,
			a: []float64{10, 11, 12}, b: []float64{1, 2, 3},
			outcome: CannotTell, says: "cannot reach 95 % confidence",
		},
		{
			name: "three against three at 90 %", better: LowerIsBetter, level: 0.9,
			a: []float64{10, 11, 12}, b: []float64{1, 2, 3},
			outcome: Different, says: "90 % CI", coverage: 0.9,
		},
		{
			name: "a zero cannot be a ratio", better: HigherIsBetter,
			a: []float64{0, 1, 2, 3}, b: []float64{1, 2, 3, 4},
			outcome: CannotTell, says: "positive",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := Compare("figure", c.better, c.a, c.b, c.level)
			if err != nil {
				t.Fatal(err)
			}
			s := v.String()
			if v.Outcome != c.outcome {
				t.Fatalf("outcome %q, want %q: %s", v.Outcome, c.outcome, s)
			}
			if !strings.Contains(s, c.says) {
				t.Errorf("%q does not say %q", s, c.says)
			}
			if c.outcome == CannotTell {
				if v.Low != 0 || v.High != 0 {
					t.Errorf("an interval [%v, %v] with no verdict", v.Low, v.High)
				}
				return
			}
			if c.ratio != [2]float64{} && (v.Ratio < c.ratio[0] || v.Ratio > c.ratio[1]) {
				t.Errorf("ratio %v, want within %v", v.Ratio, c.ratio)
			}
			if !(v.Low <= v.Ratio && v.Ratio <= v.High) {
				t.Errorf("ratio %v outside its interval [%v, %v]", v.Ratio, v.Low, v.High)
			}
			if (v.Low > 1 || v.High < 1) != (v.Outcome == Different) {
				t.Errorf("interval [%v, %v] and outcome %q disagree", v.Low, v.High, v.Outcome)
			}
			if v.Confidence < v.Level {
				t.Errorf("coverage %v below the level %v", v.Confidence, v.Level)
			}
			if c.coverage != 0 && math.Abs(v.Confidence-c.coverage) > 1e-9 {
				t.Errorf("coverage %v, want %v", v.Confidence, c.coverage)
			}
		})
	}
	if _, err := Compare("figure", LowerIsBetter, []float64{1, 2}, []float64{1, 2}, 1.5); err == nil || !strings.Contains(err.Error(), "between 0 and 1") {
		t.Errorf("level 1.5: error %v, want one naming the range", err)
	}
}

func TestInterval(t *testing.T) {
	cases := []struct {
		x               []float64
		median, low, hi float64
		confidence      float64
		reachesTheLevel bool
	}{
		// Five repeats: no pair reaches 95 %; the widest is given, at
		// 1 - 2/32.
		{x: []float64{3, 1, 5, 2, 4}, median: 3, low: 1, hi: 5, confidence: 1 - 2.0/32},
		// Six: the smallest and the largest, at 1 - 2/64.
		{x: []float64{6, 1, 5, 2, 4, 3}, median: 3.5, low: 1, hi: 6, confidence: 1 - 2.0/64, reachesTheLevel: true},
		// Nine: the 2nd and the 8th, at 1 - 2*10/512.
		{x: []float64{9, 8, 7, 6, 5, 4, 3, 2, 1}, median: 5, low: 2, hi: 8, confidence: 1 - 2*10.0/512, reachesTheLevel: true},
		{x: []float64{7}, median: 7, low: 7, hi: 7, confidence: 0},
	}
	for _, c := range cases {
		e, err := Interval(c.x, 0)
		if err != nil {
			t.Fatal(err)
		}
		if e.Median != c.median || e.Low != c.low || e.High != c.hi || math.Abs(e.Confidence-c.confidence) > 1e-9 {
			t.Errorf("%v: %+v, want median %v in [%v, %v] at %v", c.x, e, c.median, c.low, c.hi, c.confidence)
		}
		if (e.Confidence >= DefaultLevel) != c.reachesTheLevel {
			t.Errorf("%v: coverage %v against 95 %%: want reached=%v", c.x, e.Confidence, c.reachesTheLevel)
		}
	}
	if _, err := Interval(nil, 0); err != ErrNoRepeats {
		t.Errorf("no repeats: %v", err)
	}
}

// repeatP runs one synthetic repeat: n latencies of a log-normal around
// base (the machine's drift scales the whole repeat), a share of them
// stalled by a GC-like pause, plus add, recorded in an HdrHistogram as a
// worker does; it returns the repeat's p50 and p99 in ms.
func repeatP(rng *rand.Rand, n int, base time.Duration, add time.Duration) (p50, p99 float64) {
	h := stats.NewHistogram()
	drift := math.Exp(0.2 * rng.NormFloat64())
	stalled := rng.Float64() < 0.3
	for i := 0; i < n; i++ {
		d := time.Duration(float64(base) * drift * math.Exp(0.6*rng.NormFloat64()))
		if stalled && rng.Float64() < 0.004 {
			d += 50 * time.Millisecond
		}
		h.Record(d + add)
	}
	return float64(h.ValueAtPercentile(50)) / 1e3, float64(h.ValueAtPercentile(99)) / 1e3
}

// trial compares repeats of A and B, each made by gen, and says for each
// figure whether the verdict was "different".
func trials(t *testing.T, name string, n, repeats int, gen func(rng *rand.Rand, b bool) []float64, figures []string) []float64 {
	t.Helper()
	rng := rand.New(rand.NewPCG(42, uint64(len(name))))
	different := make([]float64, len(figures))
	for i := 0; i < n; i++ {
		a := make([][]float64, len(figures))
		b := make([][]float64, len(figures))
		// Interleaved A B B A ..., as a suite runs them.
		for r := 0; r < repeats; r++ {
			for _, isB := range [][2]bool{{false, true}, {true, false}}[r%2] {
				vals := gen(rng, isB)
				for f := range figures {
					if isB {
						b[f] = append(b[f], vals[f])
					} else {
						a[f] = append(a[f], vals[f])
					}
				}
			}
		}
		for f, fig := range figures {
			v, err := Compare(fig, LowerIsBetter, a[f], b[f], 0)
			if err != nil {
				t.Fatal(err)
			}
			if v.Outcome == CannotTell {
				t.Fatalf("%s: %s", name, v)
			}
			if v.Outcome == Different {
				different[f]++
			}
		}
	}
	for f := range different {
		different[f] /= float64(n)
	}
	return different
}

// Two sets of repeats of one configuration are called different in at most
// 5 % of trials, whatever the figures' distribution: skewed (log-normal
// with the spread this project measured on one machine), heavy-tailed,
// and p50/p99 from synthetic HdrHistograms with drift and stalls.
func TestNoDifferenceBetweenRepeatsOfOneConfiguration(t *testing.T) {
	const maxFalse = 0.05
	lognormal := trials(t, "log-normal", 2000, 5, func(rng *rand.Rand, _ bool) []float64 {
		return []float64{5 * math.Exp(0.5*rng.NormFloat64())}
	}, []string{"p50"})
	pareto := trials(t, "pareto", 2000, 5, func(rng *rand.Rand, _ bool) []float64 {
		return []float64{math.Pow(1-rng.Float64(), -1/1.2)} // tail index 1.2: no variance
	}, []string{"p99"})
	hist := trials(t, "histograms", 400, 5, func(rng *rand.Rand, _ bool) []float64 {
		p50, p99 := repeatP(rng, 1000, 3*time.Millisecond, 0)
		return []float64{p50, p99}
	}, []string{"p50", "p99"})
	for name, rates := range map[string][]float64{"log-normal p50": lognormal, "pareto p99": pareto, "histogram p50, p99": hist} {
		for _, r := range rates {
			t.Logf("%s: called different in %.1f %% of trials", name, 100*r)
			if r > maxFalse {
				t.Errorf("%s: same configuration called different in %.1f %% of trials (at most %.0f %%)", name, 100*r, 100*maxFalse)
			}
		}
	}
}

// A 5 ms delay on every acknowledgement (what the sync-delay shim adds on
// the ack path) is found in at least 95 % of trials beside the machine's
// drift and stalls: in p50 by 5 repeats against 5, in p99, whose spread
// over repeats is wider, by 12 against 12 (5 against 5 find it in about
// three trials of five: the figure the repeats must be sized for).
func TestFindsAnInjectedDelay(t *testing.T) {
	gen := func(rng *rand.Rand, isB bool) []float64 {
		add := time.Duration(0)
		if isB {
			add = 5 * time.Millisecond
		}
		p50, p99 := repeatP(rng, 1000, 3*time.Millisecond, add)
		return []float64{p50, p99}
	}
	for _, c := range []struct {
		repeats int
		figure  int
	}{{5, 0}, {12, 1}} {
		found := trials(t, "injected", 200, c.repeats, gen, []string{"p50", "p99"})
		for f, r := range found {
			t.Logf("%d repeats against %d, figure %d: found in %.1f %% of trials", c.repeats, c.repeats, f, 100*r)
		}
		if r := found[c.figure]; r < 0.95 {
			t.Errorf("%d repeats against %d, figure %d: the 5 ms delay found in %.1f %% of trials (at least 95 %%)", c.repeats, c.repeats, c.figure, 100*r)
		}
	}
}
