package history

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
)

// Verdict is how one run's figure stands against the runs of its series
// before it.
type Verdict string

const (
	// Within: the value lies inside the segment's prediction interval.
	Within Verdict = "within the series' spread"
	// Worse and Better: outside it, latency up or throughput down (Worse),
	// or the other way.
	Worse  Verdict = "worse"
	Better Verdict = "better"
	// TooFew: the segment is one run, which has no spread to be outside
	// of.
	TooFew Verdict = "too few runs to tell (a spread needs 2)"
	// First: the run is the first of its configuration.
	First Verdict = "the first run of its configuration"
	// NoneBefore: earlier runs of the configuration lack the figure (a
	// figure that older summaries did not record).
	NoneBefore Verdict = "no earlier run of its configuration has it"
)

// Standing is how one run's figure stands against its series' last
// segment: the runs after the track's last change point before the run,
// up to it. A change point needs 3 runs on each side, so the first slow
// run of a nightly series is no change point yet; its standing is what
// says it is outside the spread the runs before it had.
type Standing struct {
	Figure Figure
	// Run is the run's index in the series' Runs; Value its figure (a
	// repeated run's median).
	Run   int
	Value float64
	// Segment is the runs compared with (indices in the series' Runs),
	// Mean and SD their figure's mean and sample standard deviation.
	Segment  []int
	Mean, SD float64
	// Relative is (Value − Mean) / Mean; 0 when the mean is 0.
	Relative float64
	// Low and High bound the two-sided prediction interval of one new
	// observation at 1 − Alpha: Mean ± t(n−1, 1−Alpha/2) · SD · √(1+1/n).
	// PValue is the value's, under the same t distribution: below Alpha
	// exactly when the value lies outside [Low, High]. All three need
	// 2 segment runs (PValue is 1 with fewer).
	Low, High float64
	Alpha     float64
	PValue    float64
	Verdict   Verdict
	// ChangeHere: a change point of the track is at this run (it starts
	// a segment); the segment is then the one before it.
	ChangeHere bool
}

// Standings are one run's standings, a figure each, in the series it
// belongs to.
type Standings struct {
	Series string
	Config Config
	// Runs is how many runs the series has; Run is the index of the run
	// that stands, Name its name.
	Runs    int
	Run     int
	Name    string
	Figures []Standing
	// Alpha is the figures' (Standing.Alpha).
	Alpha float64
}

// Newest is how the newest run of s stands against the runs before it.
func Newest(s Series, alpha float64) Standings {
	return Stand(s, len(s.Runs)-1, alpha)
}

// Stand is how the run at index run of s stands, per figure the run has,
// against the track's segment before it; alpha is the prediction
// interval's 1 − coverage (0.01: a stationary series' new run lies outside
// in 1 % of runs). s must have been analysed (Analyze).
func Stand(s Series, run int, alpha float64) Standings {
	out := Standings{Series: s.Key, Config: s.Config, Runs: len(s.Runs), Run: run, Alpha: alpha}
	if run < 0 || run >= len(s.Runs) {
		return out
	}
	out.Name = s.Runs[run].Name
	for _, t := range s.Tracks {
		at := -1
		for p, r := range t.Runs {
			if r == run {
				at = p
			}
		}
		if at < 0 {
			continue
		}
		from, here := 0, false
		for _, c := range t.Changes {
			if c.Index < at {
				from = c.Index
			}
			here = here || c.Index == at
		}
		st := stand(t.Figure, t.Values[from:at], t.Values[at], alpha)
		st.Run, st.ChangeHere = run, here
		st.Segment = append([]int(nil), t.Runs[from:at]...)
		if st.Verdict == NoneBefore && run == 0 {
			st.Verdict = First
		}
		out.Figures = append(out.Figures, st)
	}
	return out
}

// stand is the standing of x against the segment seg.
func stand(f Figure, seg []float64, x, alpha float64) Standing {
	st := Standing{Figure: f, Value: x, Alpha: alpha, PValue: 1}
	n := len(seg)
	if n == 0 {
		st.Verdict = NoneBefore
		return st
	}
	for _, v := range seg {
		st.Mean += v
	}
	st.Mean /= float64(n)
	if st.Mean != 0 {
		st.Relative = (x - st.Mean) / st.Mean
	}
	if n == 1 {
		st.Verdict = TooFew
		return st
	}
	for _, v := range seg {
		st.SD += (v - st.Mean) * (v - st.Mean)
	}
	st.SD = math.Sqrt(st.SD / float64(n-1))
	// One new observation x of the segment's distribution has
	// (x − mean) / (s · √(1+1/n)) distributed as Student's t with n−1
	// degrees of freedom (normal runs): the interval holds it with
	// probability 1 − alpha. A confidence interval of the mean would be
	// √n times narrower and call most single runs outside.
	scale := st.SD * math.Sqrt(1+1/float64(n))
	st.Low, st.High = st.Mean, st.Mean
	switch {
	case scale > 0:
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}
		half := t.Quantile(1-alpha/2) * scale
		st.Low, st.High = st.Mean-half, st.Mean+half
		st.PValue = 2 * t.Survival(math.Abs(x-st.Mean)/scale)
	case x != st.Mean:
		// The segment did not vary at all: any other value is outside.
		st.PValue = 0
	}
	st.Verdict = Within
	if st.PValue < alpha {
		st.Verdict = Better
		if (x > st.Mean) != f.HigherBetter {
			st.Verdict = Worse
		}
	}
	return st
}

func (s Standing) String() string {
	name := s.Figure.Name
	if len(s.Segment) == 0 {
		return fmt.Sprintf("%s %s: %s%s", name, s.quantity(s.Value), s.Verdict, s.here())
	}
	head := fmt.Sprintf("%s %+.1f %% against the series' last segment of %s", name, s.Relative*100, plural(len(s.Segment), "run"))
	from := fmt.Sprintf(" (%s → %s)", s.quantity(s.Mean), s.quantity(s.Value))
	switch s.Verdict {
	case Worse, Better:
		return fmt.Sprintf("%s%s, outside its spread (%s): %s%s", head, from, PValue(s.PValue), s.Verdict, s.here())
	case TooFew:
		return fmt.Sprintf("%s%s: %s%s", head, from, s.Verdict, s.here())
	}
	return fmt.Sprintf("%s: %s%s", head, s.Verdict, s.here())
}

func (s Standing) here() string {
	if s.ChangeHere {
		return "; change point here"
	}
	return ""
}

func (s Standing) quantity(v float64) string {
	return strings.TrimSpace(Number(v) + " " + s.Figure.Unit)
}

// Number is a figure with three significant digits, trailing zeros kept
// (4.10, 12.0, 1530): values a table lines up are read alike.
func Number(v float64) string {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	digits := 2 - int(math.Floor(math.Log10(math.Abs(v))))
	if digits < 0 {
		digits = 0
	}
	return strconv.FormatFloat(v, 'f', digits, 64)
}

// PValue writes a p-value: two significant digits, and "p < 0.0001"
// below (a constant segment gives 0, which is no probability to print).
func PValue(p float64) string {
	if p < 1e-4 {
		return "p < 0.0001"
	}
	return "p " + strconv.FormatFloat(p, 'g', 2, 64)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Regressed lists the standings worse than their segment by at least
// minRelative (0.05 = 5 %).
func (s Standings) Regressed(minRelative float64) []Standing {
	var out []Standing
	for _, f := range s.Figures {
		if f.Verdict == Worse && math.Abs(f.Relative) >= minRelative {
			out = append(out, f)
		}
	}
	return out
}

// Failure is a figure of a series that --fail-on-regression fails on: its
// last change point made it worse (Regression), its newest run is worse
// than the series' last segment (Standing), or both.
type Failure struct {
	Series     string
	Figure     string
	Regression *Regression
	Standing   *Standing
	// Run is the newest run's name.
	Run string
}

func (f Failure) String() string {
	var parts []string
	if r := f.Regression; r != nil {
		parts = append(parts, r.String())
	}
	if s := f.Standing; s != nil {
		parts = append(parts, fmt.Sprintf("series %s, newest run %s: %s", f.Series, f.Run, s))
	}
	return strings.Join(parts, "; and ")
}

// Gate is the rule of --fail-on-regression, per series and figure: fail
// when the track's last change point made the figure worse by at least
// minRelative (Regressions), or when the newest run lies outside the last
// segment's prediction interval on the worse side, by at least
// minRelative. The second catches the first slow run of a nightly
// series, which no change point can (it needs 3 runs after the change).
//
// alpha is the whole gate's, not each figure's: a series of k figures
// fails only on a change point or a standing whose p-value is under
// alpha / k (Bonferroni, which holds however the figures move together:
// p50, p99 and the end-to-end ones mostly do). Each figure at alpha
// alone failed 5 of 47 nights of one configuration on real brokers
// (hack/bench-falsepositives --gate; docs/methodology.md). The series
// must have been analysed (Analyze).
func Gate(series []Series, minRelative, alpha float64) []Failure {
	var out []Failure
	for _, s := range series {
		each := FigureAlpha(s, alpha)
		regs := map[string]*Regression{}
		for _, r := range Regressions([]Series{s}, minRelative) {
			if r.Change.PValue < each {
				regs[r.Figure] = &r
			}
		}
		st := Newest(s, each)
		worse := map[string]*Standing{}
		for _, w := range st.Regressed(minRelative) {
			worse[w.Figure.Name] = &w
		}
		for _, t := range s.Tracks {
			f := Failure{Series: s.Key, Figure: t.Figure.Name, Run: st.Name,
				Regression: regs[t.Figure.Name], Standing: worse[t.Figure.Name]}
			if f.Regression != nil || f.Standing != nil {
				out = append(out, f)
			}
		}
	}
	return out
}

// FigureAlpha is what each figure of s is tested at when the gate's is
// alpha: alpha over the figures the series has (a figure no run of it
// recorded, such as the brokers' CPU of an existing cluster, is not
// tested and not counted).
func FigureAlpha(s Series, alpha float64) float64 {
	k := s.Recorded()
	if k <= 1 {
		return alpha
	}
	return alpha / float64(k)
}

// Recorded is how many figures the runs of s recorded (tracks with a
// value).
func (s Series) Recorded() int {
	k := 0
	for _, t := range s.Tracks {
		if len(t.Values) > 0 {
			k++
		}
	}
	return k
}
