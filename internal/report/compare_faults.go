package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	dur "github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/results"
)

// FlagFaults: the runs' fault schedules differ (a fault one has and the
// other not, another action or target, another time), or a fault of the
// schedule was not injected in one of them: their dips, recoveries and
// losses answer different questions.
const FlagFaults FlagKind = "faults"

// faultTimeTolerance is how far apart (seconds) two runs' injections of
// the same fault may be and still count as the same schedule. The results
// keep when each fault came, not the schedule itself; the record's times
// are whole seconds and an injection takes a moment (a pod delete is an
// API call), so a second or two apart is the same schedule, while 5 s is
// half an interval, and the dip and recovery would be read differently.
const faultTimeTolerance = 5.0

// faultColumns are the columns of compare's fault table.
var faultColumns = []string{"fault", "run", "action, target", "injected", "dip (of the target rate)", "time to recover", "worst p99 ms", "lost"}

// scheduled is one fault of a run's schedule as its results show it.
type scheduled struct {
	Index          int32
	Action         v1alpha1.FaultAction
	Target         v1alpha1.FaultTarget
	At             *float64 // the first injection's time in the measured phase
	NotInjected    []string // why, per repeat it was not injected in
	InjectedRepeat bool     // injected in at least one repeat
}

// scheduleOf is a run's schedule by fault index, from its faults' records
// (every repeat's).
func scheduleOf(ffs []faultFigures) map[int32]*scheduled {
	out := map[int32]*scheduled{}
	for _, f := range ffs {
		s := out[f.Index]
		if s == nil {
			s = &scheduled{Index: f.Index, Action: f.Action, Target: f.Target}
			out[f.Index] = s
		}
		if f.Injected {
			s.InjectedRepeat = true
			if s.At == nil {
				s.At = f.AtSeconds
			}
		} else {
			why := nonEmpty(f.Message, "no reason recorded")
			if f.Repeat > 0 {
				why = fmt.Sprintf("repeat %d: %s", f.Repeat, why)
			}
			s.NotInjected = append(s.NotInjected, why)
		}
	}
	return out
}

func (s *scheduled) String() string {
	t := fmt.Sprintf("#%d %s %s", s.Index, s.Action, s.Target)
	if s.At != nil {
		t += fmt.Sprintf(" at %.0f s", *s.At)
	}
	return t
}

func scheduleText(m map[int32]*scheduled) string {
	if len(m) == 0 {
		return "no faults"
	}
	var parts []string
	for _, i := range sortedIndices(m) {
		parts = append(parts, m[i].String())
	}
	return strings.Join(parts, ", ")
}

func sortedIndices(m map[int32]*scheduled) []int32 {
	var idx []int32
	for i := range m {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	return idx
}

// faultsFlag flags a pair whose fault schedules differ, or where a fault
// came in one run and not in the other.
func faultsFlag(a, b Named, add func(FlagKind, string, ...any)) {
	fa, fb := faultsOf(a.Summary), faultsOf(b.Summary)
	if len(fa) == 0 && len(fb) == 0 {
		return
	}
	sa, sb := scheduleOf(fa), scheduleOf(fb)
	var diffs []string
	idx := map[int32]bool{}
	for i := range sa {
		idx[i] = true
	}
	for i := range sb {
		idx[i] = true
	}
	all := make([]int32, 0, len(idx))
	for i := range idx {
		all = append(all, i)
	}
	slices.Sort(all)
	for _, i := range all {
		x, y := sa[i], sb[i]
		switch {
		case x == nil:
			diffs = append(diffs, fmt.Sprintf("fault #%d (%s %s) only in %s", i, y.Action, y.Target, b.Name))
		case y == nil:
			diffs = append(diffs, fmt.Sprintf("fault #%d (%s %s) only in %s", i, x.Action, x.Target, a.Name))
		case x.Action != y.Action || !sameFailure(a.Summary.System, x.Target, b.Summary.System, y.Target):
			diffs = append(diffs, fmt.Sprintf("fault #%d is %s %s vs %s %s", i, x.Action, x.Target, y.Action, y.Target))
		case x.At != nil && y.At != nil && math.Abs(*x.At-*y.At) > faultTimeTolerance:
			diffs = append(diffs, fmt.Sprintf("fault #%d came at %.0f s vs %.0f s into the measured phase", i, *x.At, *y.At))
		}
		// A fault one run missed and the other had is a different
		// schedule as it happened; missed in both alike, it is not.
		if x == nil || y == nil || (len(x.NotInjected) == len(y.NotInjected) && x.InjectedRepeat == y.InjectedRepeat) {
			continue
		}
		for _, p := range []struct {
			s    *scheduled
			name string
		}{{x, a.Name}, {y, b.Name}} {
			if len(p.s.NotInjected) > 0 {
				diffs = append(diffs, fmt.Sprintf("fault #%d was not injected in %s (%s)", i, p.name, strings.Join(p.s.NotInjected, "; ")))
			}
		}
	}
	if len(diffs) == 0 {
		return
	}
	add(FlagFaults, "the fault schedules differ (%s vs %s): %s; a dip, a recovery and a loss answer the fault that came, so compare runs that had the same faults at the same times",
		scheduleText(sa), scheduleText(sb), strings.Join(diffs, "; "))
}

// sameFailure says two targets are the same failure: the same target, or,
// between Kafka and Pulsar, a Kafka broker and the Pulsar bookie of its
// ordinal. Both are the node that stores the data (the topology flags set
// Kafka's brokers against Pulsar's bookies for the same reason), and the
// matched twin samples kill broker-1 and bookie-1 at the same time
// (config/samples/run-ack2-async-broker-failure.yaml,
// run-ack2-async-pulsar-bookie-failure.yaml); whether the two deployments
// ride that loss out alike is the [tolerance] flag's to say. Pure.
func sameFailure(sa v1alpha1.System, ta v1alpha1.FaultTarget, sb v1alpha1.System, tb v1alpha1.FaultTarget) bool {
	if ta == tb {
		return true
	}
	if sa == sb {
		return false
	}
	if sa == v1alpha1.SystemPulsar {
		ta, tb = tb, ta
	}
	ra, na, errA := ta.Parse()
	rb, nb, errB := tb.Parse()
	return errA == nil && errB == nil && ra == v1alpha1.RoleBroker && rb == v1alpha1.RoleBookie && na == nb
}

// faultRows are the runs' faults side by side: for each fault index, each
// run's row (each repeat's, for a repeated run), in the runs' order. Lost
// is the fault's own (impact.lost: the losses sent in its intervals), or
// the run's total, said so, where they were not placed. Nil when no run
// had faults.
func faultRows(runs []Named) [][]string {
	type entry struct {
		run int
		f   faultFigures
	}
	var all []entry
	for i, n := range runs {
		for _, f := range faultsOf(n.Summary) {
			all = append(all, entry{i, f})
		}
	}
	if len(all) == 0 {
		return nil
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].f.Index != all[j].f.Index {
			return all[i].f.Index < all[j].f.Index
		}
		if all[i].run != all[j].run {
			return all[i].run < all[j].run
		}
		return all[i].f.Repeat < all[j].f.Repeat
	})
	var rows [][]string
	for _, e := range all {
		f, s := e.f, runs[e.run].Summary
		name := runs[e.run].Name
		if f.Repeat > 0 {
			name += fmt.Sprintf(" (repeat %d)", f.Repeat)
		}
		r := []string{fmt.Sprintf("#%d", f.Index), name, fmt.Sprintf("%s %s", f.Action, f.Target), "–", "–", "–", "–", count(s.Results.Lost) + " (whole run)"}
		switch {
		case !f.Injected:
			r[3] = "not injected"
		case f.AtSeconds != nil:
			r[3] = fmt.Sprintf("%.0f s", *f.AtSeconds)
		default:
			r[3] = "yes"
		}
		if im := f.Impact; im != nil {
			if im.Lost != nil {
				// The fault's own, from its intervals.
				r[7] = count(*im.Lost)
			}
			r[4] = fmt.Sprintf("%.0f %%", 100*im.LowestRateFraction)
			r[5] = recoveryText(im)
			if im.WorstP99Ms != nil {
				r[6] = ms(*im.WorstP99Ms) + " " + im.LatencySeries
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// toleranceOf is a run's failure tolerance as deployed; false when its
// durability or topology does not tell it.
func toleranceOf(s *results.Summary) (dur.Tolerance, bool) {
	if s.Durability == nil {
		return dur.Tolerance{}, false
	}
	var topo *v1alpha1.Topology
	if s.Testbed != nil {
		topo = s.Testbed.Topology
	}
	return dur.ToleranceOf(*s.Durability, topo)
}

// toleranceFlag flags two runs, one of them with faults, whose
// deployments ride out a different number of losses: a Pulsar of three
// bookies at ensemble 3 waits for a lost bookie, a Kafka at RF 3 and min
// ISR 2 goes on without a broker, and a fault comparison between them
// measures the deployments, not the systems. One unknown side is said too.
func toleranceFlag(a, b Named, add func(FlagKind, string, ...any)) {
	if len(a.Summary.Faults) == 0 && len(b.Summary.Faults) == 0 {
		return
	}
	ta, oka := toleranceOf(a.Summary)
	tb, okb := toleranceOf(b.Summary)
	switch {
	case oka && okb && ta.Losses != tb.Losses:
		add(FlagTolerance, "they ride out different failures: %s, %s; %s, %s. The same fault is not the same failure to them: give the side that tolerates fewer a node to spare (a Pulsar ledger needs a bookie outside its ensemble: 4 bookies for ensemble 3), or compare faults neither rides out",
			a.Name, ta.Description, b.Name, tb.Description)
	case oka != okb:
		add(FlagTolerance, "the failure tolerance of %s is not known (its durability or its bookies are not recorded), so whether the two ride out the same faults is not known", nameOfNil(a, b, !oka))
	}
}
