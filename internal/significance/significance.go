// Package significance tells a difference between two sets of repeated runs
// from the runs' own spread, and puts an interval on one repeated run's
// figure.
//
// The unit is the repeat, never the message: the latencies of one run are
// autocorrelated (a GC pause or a slow fsync delays thousands of messages
// together) and the run-to-run drift of one machine is larger than any
// within-run spread (docs/methodology.md: publish p50 from 2.69 to 10.26 ms
// over four runs of one setting), so an interval from resampling messages
// would be far too narrow. Each repeat gives one value per figure (its p99,
// its throughput), and the tests here are on those values.
//
// Two sets are compared with the Mann-Whitney rank test and the
// Hodges-Lehmann estimate of the shift, on the logarithm of the values, so
// the shift reads as a ratio ("B's p99 is 23 % lower"). Both are exact and
// distribution-free: under "no difference" (the repeats of A and B are
// exchangeable) the chance of a "different" verdict is at most the level's
// complement whatever the figures' distribution, a promise a t-test on five
// repeats of a skewed latency cannot make. The verdict is read off the
// interval (different when it excludes a ratio of 1), so the sentence and
// its interval never disagree.
package significance

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// DefaultLevel is the confidence asked of intervals and verdicts.
const DefaultLevel = 0.95

// Better says which way a figure improves.
type Better int

const (
	// LowerIsBetter: latencies.
	LowerIsBetter Better = iota
	// HigherIsBetter: throughput.
	HigherIsBetter
)

// Outcome is a comparison's verdict.
type Outcome string

const (
	// Different: the interval of B/A excludes 1.
	Different Outcome = "different"
	// NoDifference: the interval of B/A includes 1; the runs' own spread
	// covers what separates them.
	NoDifference Outcome = "no difference"
	// CannotTell: too few repeats for the level, or values the test cannot
	// take (Verdict.Reason says which).
	CannotTell Outcome = "cannot tell"
)

// Verdict is the comparison of one figure between two sets of repeats, A
// (the reference) and B.
type Verdict struct {
	// Figure names what was compared, e.g. "publish p99 (ms)".
	Figure string `json:"figure"`
	// Better is the direction in which the figure improves.
	Better Better `json:"-"`
	// NA and NB are the repeats of each set.
	NA int `json:"nA"`
	NB int `json:"nB"`
	// MedianA and MedianB are each set's median over its repeats.
	MedianA float64 `json:"medianA"`
	MedianB float64 `json:"medianB"`
	// Ratio is B/A as the Hodges-Lehmann estimate: the median of all the
	// pairwise ratios b/a.
	Ratio float64 `json:"ratio,omitempty"`
	// Low and High bound Ratio at Level (the distribution-free interval of
	// the Mann-Whitney test); both 0 when Outcome is CannotTell.
	Low  float64 `json:"low,omitempty"`
	High float64 `json:"high,omitempty"`
	// Level is the confidence asked; Confidence the interval's exact
	// coverage, at least Level (ranks take discrete values: 5 repeats
	// against 5 give 96.8 % for 95 % asked).
	Level      float64 `json:"level"`
	Confidence float64 `json:"confidence,omitempty"`
	// P is the test's two-sided p-value (exact, ties counted half).
	P float64 `json:"p,omitempty"`
	// Outcome is the verdict; Reason says why when it is CannotTell.
	Outcome Outcome `json:"outcome"`
	Reason  string  `json:"reason,omitempty"`
}

// Compare compares the repeat-level values a and b of one figure at the
// confidence level (DefaultLevel when 0). Too few repeats, or values that
// are not positive, give CannotTell with the reason, not an error: a
// comparison of single runs is a question with an answer ("cannot tell").
// An error is only a level outside (0, 1).
func Compare(figure string, better Better, a, b []float64, level float64) (Verdict, error) {
	level, err := levelOrDefault(level)
	if err != nil {
		return Verdict{}, err
	}
	v := Verdict{Figure: figure, Better: better, NA: len(a), NB: len(b), MedianA: Median(a), MedianB: Median(b), Level: level}
	if len(a) < 2 || len(b) < 2 {
		v.Outcome = CannotTell
		v.Reason = fmt.Sprintf("%d against %d repeat(s): one run's figure carries no measure of its own spread, so no difference can be told from noise; repeat each (spec.repeats, at least 4 against 4 for %s)", len(a), len(b), percent(level))
		return v, nil
	}
	for _, x := range append(append([]float64(nil), a...), b...) {
		if !(x > 0) || math.IsInf(x, 0) {
			v.Outcome = CannotTell
			v.Reason = fmt.Sprintf("a value of %v: the comparison is of ratios, and needs positive, finite values", x)
			return v, nil
		}
	}
	// The shifts of log values, every pair: b_j / a_i as a logarithm.
	d := make([]float64, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			d = append(d, math.Log(y)-math.Log(x))
		}
	}
	sort.Float64s(d)
	v.Ratio = math.Exp(Median(d))
	null := newRankSum(len(a), len(b))
	v.P = null.twoSided(countBelow(d))
	k := null.criticalCount((1 - level) / 2)
	if k == 0 {
		v.Outcome = CannotTell
		v.Reason = fmt.Sprintf("%d against %d repeats cannot reach %s confidence even when every repeat of one lies beyond every repeat of the other (at best %s); repeat each more (at least 4 against 4)",
			len(a), len(b), percent(level), percent(1-2*null.cdf(0)))
		return v, nil
	}
	// The k-th smallest and k-th largest pairwise shifts bound the shift
	// with coverage 1 - 2 P(U < k) (Hollander and Wolfe, Nonparametric
	// Statistical Methods, 4.3).
	lo, hi := d[k-1], d[len(d)-k]
	v.Low, v.High = math.Exp(lo), math.Exp(hi)
	v.Confidence = 1 - 2*null.cdf(k-1)
	if lo > 0 || hi < 0 {
		v.Outcome = Different
	} else {
		v.Outcome = NoDifference
	}
	return v, nil
}

// countBelow is the Mann-Whitney statistic from the sorted shifts: the
// pairs where b is below a, a tie counted half.
func countBelow(sorted []float64) float64 {
	u := 0.0
	for _, x := range sorted {
		switch {
		case x < 0:
			u++
		case x == 0:
			u += 0.5
		}
	}
	return u
}

// String is the verdict as compare prints it, e.g. "B's publish p99 (ms) is
// 23 % lower, better (95 % CI 14–31 % lower)".
func (v Verdict) String() string {
	switch v.Outcome {
	case CannotTell:
		return fmt.Sprintf("%s: cannot tell: %s", v.Figure, v.Reason)
	case NoDifference:
		return fmt.Sprintf("%s: no difference beyond the runs' own spread (B/A %.2f, %s CI %.2f–%.2f; %d against %d repeats)",
			v.Figure, v.Ratio, percent(v.Level), v.Low, v.High, v.NA, v.NB)
	}
	way, lo, hi := "higher", (v.Low-1)*100, (v.High-1)*100
	if v.Ratio < 1 {
		way, lo, hi = "lower", (1-v.High)*100, (1-v.Low)*100
	}
	judged := "worse"
	if (v.Ratio < 1) == (v.Better == LowerIsBetter) {
		judged = "better"
	}
	return fmt.Sprintf("%s: B's is %.0f %% %s, %s (%s CI %.0f–%.0f %% %s; %d against %d repeats, p = %.3g)",
		v.Figure, math.Abs(v.Ratio-1)*100, way, judged, percent(v.Level), lo, hi, way, v.NA, v.NB, v.P)
}

// Estimate is one figure of a repeated run: the median over its repeats and
// an interval for the median of the machine's repeat-to-repeat spread.
type Estimate struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	// Low and High are order statistics of the repeats bounding the median
	// with coverage Confidence, whatever the figures' distribution. With
	// fewer than 6 repeats no pair of them reaches 95 %: the widest (the
	// smallest and the largest) is given with its own, lower, coverage.
	Low        float64 `json:"low"`
	High       float64 `json:"high"`
	Confidence float64 `json:"confidence"`
}

// ErrNoRepeats is Interval's error for an empty set.
var ErrNoRepeats = errors.New("no repeats: an interval needs at least one value")

// Interval is the median of the repeats x and its distribution-free
// interval at level (DefaultLevel when 0), or the widest interval the
// repeats allow when they are too few for the level.
func Interval(x []float64, level float64) (Estimate, error) {
	if len(x) == 0 {
		return Estimate{}, ErrNoRepeats
	}
	level, err := levelOrDefault(level)
	if err != nil {
		return Estimate{}, err
	}
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	e := Estimate{N: len(s), Median: Median(s)}
	k := medianOrderStatistic(len(s), (1-level)/2)
	if k == 0 {
		k = 1
	}
	e.Low, e.High = s[k-1], s[len(s)-k]
	e.Confidence = 1 - 2*binomialHalfCDF(len(s), k-1)
	return e, nil
}

// levelOrDefault is the confidence level asked: DefaultLevel for 0, an
// error outside (0, 1).
func levelOrDefault(level float64) (float64, error) {
	if level == 0 {
		return DefaultLevel, nil
	}
	if level <= 0 || level >= 1 {
		return 0, fmt.Errorf("confidence level %v: must be between 0 and 1 (e.g. 0.95)", level)
	}
	return level, nil
}

// Median of x (sorted or not): the mean of the middle two for an even
// count; NaN for none.
func Median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func percent(level float64) string {
	p := level * 100
	if p == math.Trunc(p) {
		return fmt.Sprintf("%.0f %%", p)
	}
	return fmt.Sprintf("%.1f %%", p)
}
