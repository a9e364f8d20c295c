package faultimpact

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"k8s.io/utils/ptr"
)

// iv is one 10 s interval of a hand-built series at a target of 1000
// msg/s: its publish rate, corrected p99 (the publish p99 is half of it;
// below 0: no acknowledgement, no p99) and failed sends.
type iv struct {
	rate, p99 float64
	errs      int64
}

func good(p99 float64) iv   { return iv{rate: 1000, p99: p99} }
func stalled(errs int64) iv { return iv{rate: 0, p99: -1, errs: errs} }

func series(ivs ...iv) []Point {
	out := make([]Point, len(ivs))
	for i, v := range ivs {
		out[i] = Point{StartSeconds: float64(10 * i), Seconds: 10, PublishRate: v.rate, PublishErrors: v.errs}
		if v.p99 >= 0 {
			out[i].P99Ms, out[i].CorrectedP99Ms = ptr.To(v.p99/2), ptr.To(v.p99)
		}
	}
	return out
}

// repeat is n copies of v.
func repeat(n int, v iv) []iv {
	out := make([]iv, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func cat(parts ...[]iv) []Point {
	var all []iv
	for _, p := range parts {
		all = append(all, p...)
	}
	return series(all...)
}

func at(s float64) Window { return Window{InjectedSeconds: s} }
func atFor(s, cleared float64) Window {
	return Window{InjectedSeconds: s, ClearedSeconds: &cleared}
}

// want is what an Impact must say; a nil pointer must be nil.
type want struct {
	covered            bool
	recovery, stable   *float64
	relapses           int
	lowest             float64
	errors             int64
	worst, preFault    *float64
	series             string
	notes              []string // words each note in turn must hold
	recoveredIntervals int
}

func f(x float64) *float64 { return &x }

func TestCompute(t *testing.T) {
	pre := repeat(5, good(4))
	cases := []struct {
		name   string
		points []Point
		faults []Window
		o      Options
		want   []want
	}{
		{"a stall, then back",
			cat(pre, []iv{stalled(30), {rate: 400, p99: 800, errs: 12}}, repeat(4, good(5))),
			[]Window{atFor(50, 60)}, Options{},
			[]want{{covered: true, recovery: f(20), stable: f(20), lowest: 0, errors: 42, worst: f(800), preFault: f(4), series: SeriesCorrected}}},
		{"no effect: recovered at once",
			cat(pre, repeat(5, good(5))),
			[]Window{atFor(55, 58)}, Options{},
			[]want{{covered: true, recovery: f(0), stable: f(0), lowest: 1, worst: f(5), preFault: f(4), series: SeriesCorrected}}},
		{"the rate is back before the p99: recovery waits for both",
			cat(repeat(3, good(10)), []iv{stalled(0), good(100), good(25)}, repeat(3, good(12))),
			[]Window{at(30)}, Options{},
			[]want{{covered: true, recovery: f(30), stable: f(30), lowest: 0, worst: f(100), preFault: f(10), series: SeriesCorrected}}},
		{"a fault at the first interval: no pre-fault p99, judged on the rate",
			series(iv{rate: 300, p99: 50}, good(50), good(50), good(50)),
			[]Window{at(0)}, Options{},
			[]want{{covered: true, recovery: f(10), stable: f(10), lowest: 0.3, worst: f(50), series: SeriesCorrected,
				notes: []string{"no interval before the fault|publish rate alone"}}}},
		{"never recovers",
			cat(repeat(3, good(4)), repeat(5, iv{rate: 500, p99: 9, errs: 1})),
			[]Window{at(30)}, Options{},
			[]want{{covered: true, lowest: 0.5, errors: 5, worst: f(9), preFault: f(4), series: SeriesCorrected,
				notes: []string{"not recovered before the end of the measured phase"}}}},
		{"recovery, relapse, then back for good",
			cat(repeat(3, good(4)), []iv{stalled(7)}, repeat(3, good(4)), []iv{{rate: 600, p99: 30}, {rate: 1000, p99: 20}}, repeat(3, good(4))),
			[]Window{at(30)}, Options{},
			[]want{{covered: true, recovery: f(10), stable: f(60), relapses: 1, lowest: 0, errors: 7, worst: f(30), preFault: f(4), series: SeriesCorrected}}},
		{"recovery, then a relapse it does not come back from",
			cat(repeat(2, good(4)), []iv{stalled(0)}, repeat(3, good(4)), repeat(2, iv{rate: 100, p99: 40})),
			[]Window{at(20)}, Options{},
			[]want{{covered: true, recovery: f(10), relapses: 1, lowest: 0, worst: f(40), preFault: f(4), series: SeriesCorrected,
				notes: []string{"relapsed|3 intervals|end of the measured phase"}}}},
		{"two relapses",
			cat(repeat(2, good(4)), []iv{stalled(0)}, repeat(3, good(4)), []iv{stalled(0)}, repeat(3, good(4)), []iv{stalled(0)}, repeat(3, good(4))),
			[]Window{at(20)}, Options{},
			[]want{{covered: true, recovery: f(10), stable: f(90), relapses: 2, lowest: 0, worst: f(4), preFault: f(4), series: SeriesCorrected}}},
		{"the phase ends before the bar held long enough",
			cat(repeat(3, good(4)), []iv{stalled(0)}, repeat(2, good(4))),
			[]Window{at(30)}, Options{},
			[]want{{covered: true, lowest: 0, worst: f(4), preFault: f(4), series: SeriesCorrected, notes: []string{"not recovered"}}}},
		{"a shorter bar",
			cat(repeat(3, good(4)), []iv{stalled(0)}, repeat(1, good(4))),
			[]Window{at(30)}, Options{RecoveryIntervals: 1},
			[]want{{covered: true, recovery: f(10), stable: f(10), lowest: 0, preFault: f(4), series: SeriesCorrected, recoveredIntervals: 1}}},
		{"a pause that outlasts the failover: the figures run to the clearing",
			cat(repeat(3, good(4)), []iv{stalled(3)}, repeat(5, good(4)), []iv{{rate: 990, p99: 7, errs: 2}}, repeat(5, good(4))),
			[]Window{atFor(30, 100)}, Options{},
			[]want{{covered: true, recovery: f(10), stable: f(10), lowest: 0, errors: 5, worst: f(7), preFault: f(4), series: SeriesCorrected}}},
		{"the series ends before the fault",
			series(good(4), good(4)),
			[]Window{at(200)}, Options{},
			[]want{{covered: false, notes: []string{"no interval of the measured phase after the fault at 200s"}}}},
		{"the corrected p99 missing in an interval: the publish p99",
			func() []Point {
				p := cat(repeat(3, good(4)), []iv{stalled(0)}, repeat(3, good(4)))
				p[5].CorrectedP99Ms = nil
				return p
			}(),
			[]Window{at(30)}, Options{},
			[]want{{covered: true, recovery: f(10), stable: f(10), lowest: 0, preFault: f(2), series: SeriesPublish,
				notes: []string{"corrected latency was not recorded"}}}},
		{"two faults, given out of order: the second's pre-fault p99 is after the first's recovery",
			cat(repeat(3, good(4)), []iv{stalled(0)}, repeat(6, good(8)), []iv{{rate: 200, p99: 90}}, repeat(3, good(8))),
			[]Window{at(100), atFor(30, 35)}, Options{},
			[]want{
				{covered: true, recovery: f(10), stable: f(10), lowest: 0.2, worst: f(90), preFault: f(8), series: SeriesCorrected},
				{covered: true, recovery: f(10), stable: f(10), lowest: 0, preFault: f(4), series: SeriesCorrected},
			}},
		{"the next fault before the first recovered",
			cat(repeat(3, good(4)), repeat(3, stalled(1)), repeat(4, good(4))),
			[]Window{at(30), at(50)}, Options{},
			[]want{
				{covered: true, lowest: 0, errors: 2, preFault: f(4), series: SeriesCorrected, notes: []string{"not recovered before the next fault at 50s"}},
				{covered: true, recovery: f(10), stable: f(10), lowest: 0, errors: 1, series: SeriesCorrected,
					notes: []string{"an earlier fault had not recovered", "came before the fault at 30s had recovered"}},
			}},
		{"faults at the same time share their pre-fault p99",
			cat(repeat(3, good(4)), []iv{stalled(0)}, repeat(3, good(4))),
			[]Window{at(30), at(30)}, Options{},
			[]want{
				{covered: true, recovery: f(10), stable: f(10), lowest: 0, preFault: f(4), series: SeriesCorrected},
				{covered: true, recovery: f(10), stable: f(10), lowest: 0, preFault: f(4), series: SeriesCorrected, notes: []string{"came with another fault at 30s"}},
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Compute(tc.points, 1000, tc.faults, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d impacts, want %d", len(got), len(tc.want))
			}
			for i, w := range tc.want {
				if err := w.check(got[i]); err != nil {
					t.Errorf("fault %d: %v\n  got %+v", i, err, dump(got[i]))
				}
			}
		})
	}
}

func (w want) check(im Impact) error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if im.Covered != w.covered {
		bad("covered %v, want %v", im.Covered, w.covered)
	}
	if len(im.Notes) != len(w.notes) {
		bad("notes %q, want %d", im.Notes, len(w.notes))
	} else {
		for i, n := range w.notes {
			for _, word := range strings.Split(n, "|") {
				if !strings.Contains(im.Notes[i], word) {
					bad("note %d %q lacks %q", i, im.Notes[i], word)
				}
			}
		}
	}
	if !w.covered {
		if im.Status() != nil {
			bad("an impact not covered has a status")
		}
		return errors.Join(errs...)
	}
	eq := func(name string, got, want *float64) {
		if (got == nil) != (want == nil) || (got != nil && math.Abs(*got-*want) > 1e-9) {
			bad("%s %s, want %s", name, str(got), str(want))
		}
	}
	eq("recovery", im.RecoverySeconds, w.recovery)
	eq("stable recovery", im.StableRecoverySeconds, w.stable)
	eq("worst p99", im.WorstP99Ms, w.worst)
	eq("pre-fault p99", im.PreFaultP99Ms, w.preFault)
	if im.Recovered != (w.stable != nil) {
		bad("recovered %v with stable recovery %s", im.Recovered, str(im.StableRecoverySeconds))
	}
	if im.Relapses != w.relapses {
		bad("relapses %d, want %d", im.Relapses, w.relapses)
	}
	if math.Abs(im.LowestFraction-w.lowest) > 1e-9 || math.Abs(im.LowestRate-1000*w.lowest) > 1e-6 {
		bad("lowest %g (%g of the target), want %g of it", im.LowestRate, im.LowestFraction, w.lowest)
	}
	if im.PublishErrors != w.errors {
		bad("publish errors %d, want %d", im.PublishErrors, w.errors)
	}
	if im.Series != w.series {
		bad("series %s, want %s", im.Series, w.series)
	}
	n := w.recoveredIntervals
	if n == 0 {
		n = RecoveryIntervals
	}
	if im.RecoveryIntervals != n || im.IntervalSeconds != 10 || im.TargetRate != 1000 {
		bad("recovery intervals %d, interval %gs, target %g; want %d, 10 s, 1000", im.RecoveryIntervals, im.IntervalSeconds, im.TargetRate, n)
	}
	if s := im.Status(); s == nil || s.Recovered != im.Recovered || s.LatencySeries != im.Series || s.RecoverySeconds != im.RecoverySeconds {
		bad("status %+v does not say what the impact says", s)
	}
	return errors.Join(errs...)
}

func str(p *float64) string {
	if p == nil {
		return "absent"
	}
	return fmt.Sprint(*p)
}

func dump(im Impact) string {
	return fmt.Sprintf("{covered %v recovery %s stable %s relapses %d lowest %g errors %d worst %s pre %s series %s notes %q}",
		im.Covered, str(im.RecoverySeconds), str(im.StableRecoverySeconds), im.Relapses, im.LowestFraction, im.PublishErrors,
		str(im.WorstP99Ms), str(im.PreFaultP99Ms), im.Series, im.Notes)
}

func TestComputeNeedsTheTargetRate(t *testing.T) {
	for _, rate := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, err := Compute(series(good(4)), rate, []Window{at(0)}, Options{}); !errors.Is(err, ErrNoTargetRate) {
			t.Errorf("rate %g: got %v, want ErrNoTargetRate", rate, err)
		}
	}
}

// TestLongestWait: the longest wait is the highest interval maximum of the
// series the recovery uses, over the fault's intervals only: not those
// before it, nor those after the load was back for good.
func TestLongestWait(t *testing.T) {
	pts := cat(repeat(3, good(10)), []iv{stalled(0), good(4000)}, repeat(3, good(10)), []iv{good(12)})
	maxima := []float64{50, 60, 7000, 0, 9300, 80, 70, 60, 8000}
	for i := range pts {
		if pts[i].P99Ms != nil {
			pts[i].MaxMs, pts[i].CorrectedMaxMs = ptr.To(maxima[i]/2), ptr.To(maxima[i])
		}
	}
	ims, err := Compute(pts, 1000, []Window{at(31)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if im := ims[0]; im.LongestWaitMs == nil || *im.LongestWaitMs != 9300 {
		t.Errorf("longest wait %v, want 9300 ms (the interval the stall ended in; not 7000 before the fault, not 8000 after the recovery)", im.LongestWaitMs)
	}
	for i := range pts {
		pts[i].CorrectedP99Ms, pts[i].CorrectedMaxMs = nil, nil
	}
	ims, _ = Compute(pts, 1000, []Window{at(31)}, Options{})
	if im := ims[0]; im.Series != SeriesPublish || im.LongestWaitMs == nil || *im.LongestWaitMs != 4650 {
		t.Errorf("without the corrected series: longest wait %v in %s, want the publish maximum 4650 ms", im.LongestWaitMs, im.Series)
	}
}

// Writes that stopped at the fault and never came back: the trailing
// intervals without an acknowledgement are how long they went unanswered;
// a load that came back, or whose last interval was answered, has none.
func TestNotResumed(t *testing.T) {
	withMax := func(pts []Point) []Point {
		for i := range pts {
			if pts[i].P99Ms != nil {
				pts[i].MaxMs, pts[i].CorrectedMaxMs = ptr.To(*pts[i].P99Ms*2), ptr.To(*pts[i].CorrectedP99Ms*2)
			}
		}
		return pts
	}
	tests := []struct {
		name string
		pts  []Point
		want *float64
	}{
		{"stopped to the end", withMax(cat(repeat(3, good(10)), []iv{{rate: 50, p99: 900}}, repeat(3, stalled(0)))), f(30)},
		// A late answer in between: only the silence after it counts.
		{"a late answer, then silence", withMax(cat(repeat(3, good(10)), []iv{{rate: 50, p99: 900}, stalled(0), {rate: 1, p99: 9000}}, repeat(2, stalled(0)))), f(20)},
		{"answered at the end, not recovered", withMax(cat(repeat(3, good(10)), repeat(3, stalled(0)), []iv{{rate: 400, p99: 50}})), nil},
		{"recovered", withMax(cat(repeat(3, good(10)), repeat(2, stalled(0)), repeat(4, good(10)))), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ims, err := Compute(tc.pts, 1000, []Window{at(31)}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := ims[0].NotResumedSeconds
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("NotResumedSeconds = %v, want %v", deref(got), deref(tc.want))
			}
		})
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// Two faults of one run each have their own loss and duplicates: those of
// the intervals from the fault to its recovery, not the run's totals;
// one interval that did not place its losses leaves the fault's unknown.
func TestLossPerFault(t *testing.T) {
	pts := cat(repeat(3, good(10)), repeat(2, stalled(0)), repeat(4, good(10)), repeat(2, stalled(0)), repeat(4, good(10)))
	lost := []int64{0, 0, 0, 7, 5, 0, 0, 0, 0, 40, 2, 0, 0, 0, 0}
	for i := range pts {
		pts[i].Lost = ptr.To(lost[i])
		pts[i].Duplicates = lost[i] / 2
	}
	ims, err := Compute(pts, 1000, []Window{at(31), at(91)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []struct{ lost, dups int64 }{{12, 5}, {42, 21}} {
		im := ims[i]
		if im.Lost == nil || *im.Lost != w.lost || im.Duplicates != w.dups {
			t.Errorf("fault %d: lost %v, duplicates %d; want %d and %d", i, deref64(im.Lost), im.Duplicates, w.lost, w.dups)
		}
	}
	pts[4].Lost = nil
	ims, err = Compute(pts, 1000, []Window{at(31), at(91)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ims[0].Lost != nil || ims[1].Lost == nil {
		t.Errorf("lost %v and %v: want the first unknown (an interval without placed losses), the second known", deref64(ims[0].Lost), deref64(ims[1].Lost))
	}
}

func deref64(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
