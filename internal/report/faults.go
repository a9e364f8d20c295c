package report

import (
	"fmt"
	"math"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/faultimpact"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
)

// faultFigures is one fault of one repeat as the report and compare show
// it: the record (status.faults' shape) and its impact.
type faultFigures struct {
	v1alpha1.FaultStatus
	// Computed is true when Impact was computed here from the summary's
	// series because the record had none (local mode's summary.json is
	// written before its impact is known).
	Computed bool
	// AtSeconds and ClearedSeconds place the fault in the measured phase
	// (seconds after its start); nil when not known (not injected, not
	// cleared, or a record without times and impact).
	AtSeconds, ClearedSeconds *float64
	// NoImpact says why an injected fault has no figures.
	NoImpact string
}

// measureStart is the measured phase's first point, in seconds after the
// run's first snapshot (the series' offsets); false when the series has
// no measured point (a repeated run's aggregate keeps no series).
func measureStart(s *results.Summary) (float64, bool) {
	for _, p := range s.Series.Points {
		if p.Phase == stats.PhaseMeasure {
			return p.OffsetSeconds, true
		}
	}
	return 0, false
}

// faultsOf reads the faults of a summary. Their impact is the record's
// (the controller's status.faults) where it has one; otherwise it is
// computed from the summary's own series with internal/faultimpact, the
// same function and bar, when the summary has the series the fault
// happened in (a repeat's own summary has; a repeated run's aggregate
// has none, and its rows point to the repeats' reports).
func faultsOf(s *results.Summary) []faultFigures {
	if len(s.Faults) == 0 {
		return nil
	}
	start, hasSeries := measureStart(s)
	// The record's times are wall clock (whole seconds); the series'
	// offsets count from the run's first snapshot, which is s.Start.
	offset := func(t *v1alpha1.FaultStatus, at bool) *float64 {
		tt := t.ClearedAt
		if at {
			tt = t.InjectedAt
		}
		if tt == nil || !hasSeries || s.Start.IsZero() {
			return nil
		}
		v := tt.Sub(s.Start).Seconds() - start
		return &v
	}
	out := make([]faultFigures, len(s.Faults))
	var windows []faultimpact.Window
	var need []int // out's indices whose impact is computed
	for i, f := range s.Faults {
		ff := faultFigures{FaultStatus: f}
		if im := f.Impact; im != nil {
			ff.AtSeconds, ff.ClearedSeconds = ptr.To(im.InjectedSeconds), im.ClearedSeconds
		} else if f.Injected {
			ff.AtSeconds, ff.ClearedSeconds = offset(&f, true), offset(&f, false)
		}
		out[i] = ff
		if f.Impact != nil || !f.Injected {
			continue
		}
		switch {
		case len(s.Repeats) > 0:
			out[i].NoImpact = fmt.Sprintf("in repeat %d's own report", f.Repeat)
		case !hasSeries:
			out[i].NoImpact = "the results have no series of the measured phase"
		case ff.AtSeconds == nil:
			out[i].NoImpact = "the record has no injection time"
		default:
			need = append(need, i)
			windows = append(windows, faultimpact.Window{InjectedSeconds: *ff.AtSeconds, ClearedSeconds: ff.ClearedSeconds})
		}
	}
	if len(need) == 0 {
		return out
	}
	rate := faultimpact.TargetRate(s)
	if rate <= 0 {
		for _, i := range need {
			out[i].NoImpact = "no target rate to measure the dip against (neither producerRate nor a rate search)"
		}
		return out
	}
	ims, err := faultimpact.Compute(faultimpact.FromSeries(s.Series), rate, windows, faultimpact.Options{})
	for k, i := range need {
		switch {
		case err != nil:
			out[i].NoImpact = err.Error()
		case ims[k].Status() == nil:
			out[i].NoImpact = "no interval of the measured phase came after it"
		default:
			out[i].Impact, out[i].Computed = ims[k].Status(), true
			faultimpact.ExplainStall(&out[i].FaultStatus, s.FailureSettings)
		}
	}
	return out
}

// faultsView is the report's Faults section.
type faultsView struct {
	Rows []faultRow
	// Series says which p99 the latency columns are.
	Series string
	// Delivery is the run's whole record, beside the faults' own.
	Delivery []kv
	// Computed says the figures were computed by the report.
	Computed bool
	// Settings are the brokers' failure settings the stalls were weighed
	// against, as read; nil when none were read.
	Settings []results.BrokerSetting
	// Tolerance says how many brokers or bookies the deployment rides
	// out (durability.ToleranceOf); empty when not known.
	Tolerance string
}

type faultRow struct {
	Fault, Action, Target, Resolved string
	Injected, Cleared               string
	Dip, Recovery, Errors           string
	PreP99, WorstP99                string
	// Stall is the stall's explanation (faultimpact.Explain); empty
	// without a stall.
	Stall string
	Notes []string
	// NotInjected marks a fault that did not happen; Bad a dip to zero, a
	// load that did not come back, or failed sends.
	NotInjected, Bad bool
}

// seriesText names a latency series as the fault figures use it.
func seriesText(series string) string {
	switch series {
	case faultimpact.SeriesCorrected:
		return "corrected (ack − intended send)"
	case faultimpact.SeriesPublish:
		return "publish (ack − send; the stalled sends are not counted)"
	}
	return series
}

// faultsSection is the Faults section of a summary; nil without faults.
func faultsSection(s *results.Summary) *faultsView {
	ffs := faultsOf(s)
	if len(ffs) == 0 {
		return nil
	}
	v := &faultsView{}
	series := map[string]bool{}
	for _, f := range ffs {
		r := faultRow{Fault: faultName(f.FaultStatus), Action: string(f.Action), Target: string(f.Target),
			Resolved: nonEmpty(f.Resolved, "–"), Injected: "–", Cleared: "–", Dip: "–", Recovery: "–", Errors: "–", PreP99: "–", WorstP99: "–"}
		if !f.Injected {
			r.NotInjected = true
			r.Injected = "not injected: " + nonEmpty(f.Message, "no reason recorded")
		} else {
			// Without the series to place it in the measured phase
			// (a repeated run's aggregate), the wall clock.
			r.Injected = secondsText(f.AtSeconds, clockText(f.InjectedAt, "injected (time not recorded)"))
			switch {
			case f.ClearedSeconds != nil && f.AtSeconds != nil:
				r.Cleared = fmt.Sprintf("%s (%.0f s later)", secondsText(f.ClearedSeconds, ""), *f.ClearedSeconds-*f.AtSeconds)
			case f.ClearedSeconds != nil:
				r.Cleared = secondsText(f.ClearedSeconds, "")
			case f.ClearedAt != nil:
				r.Cleared = clockText(f.ClearedAt, "")
			default:
				r.Cleared = "not within the run"
			}
			if f.Message != "" {
				r.Notes = append(r.Notes, f.Message)
			}
		}
		if im := f.Impact; im != nil {
			series[im.LatencySeries] = true
			r.Dip = fmt.Sprintf("%s msg/s (%.0f %% of %s)", count(int64(math.Round(im.LowestPublishRateMsgPerSec))), 100*im.LowestRateFraction, count(int64(math.Round(im.TargetRateMsgPerSec))))
			r.Recovery = recoveryText(im)
			r.Errors = count(im.PublishErrors) + " / " + lostText(im.Lost) + " / " + count(im.Duplicates)
			if im.PreFaultP99Ms != nil {
				r.PreP99 = ms(*im.PreFaultP99Ms)
			}
			if im.WorstP99Ms != nil {
				r.WorstP99 = ms(*im.WorstP99Ms)
			}
			if st := im.Stall; st != nil {
				r.Stall = st.Explanation
			}
			r.Notes = append(r.Notes, im.Notes...)
			r.Bad = im.LowestRateFraction == 0 || !im.Recovered || im.PublishErrors > 0 || ptr.Deref(im.Lost, 0) > 0
			v.Computed = v.Computed || f.Computed
		} else if f.NoImpact != "" {
			r.Notes = append(r.Notes, "no figures: "+f.NoImpact)
		}
		v.Rows = append(v.Rows, r)
	}
	var names []string
	for _, k := range []string{faultimpact.SeriesCorrected, faultimpact.SeriesPublish} {
		if series[k] {
			names = append(names, seriesText(k))
		}
	}
	v.Series = strings.Join(names, "; on some faults ")
	v.Settings = s.FailureSettings
	if t, ok := toleranceOf(s); ok {
		v.Tolerance = "the deployment rides out " + t.Description
	}
	var failed int64
	for _, p := range s.Phases {
		failed += p.PublishErrors
	}
	r := s.Results
	v.Delivery = []kv{
		{Key: "acknowledged messages lost", Value: count(r.Lost), Bad: r.Lost > 0},
		{Key: "duplicates", Value: count(s.Duplicates), Bad: s.Duplicates > 0},
		{Key: "failed sends (publish errors)", Value: count(failed), Bad: failed > 0},
	}
	return v
}

// FaultLines are the Faults section for a terminal (the local run's
// printed summary): a line per fault with what it hit and when, the dip,
// the recovery, the failed sends and the p99 before and at worst, then its
// notes; nil without faults. The same figures as the report's table.
func FaultLines(s *results.Summary) []string {
	v := faultsSection(s)
	if v == nil {
		return nil
	}
	var out []string
	for _, r := range v.Rows {
		head := fmt.Sprintf("%s %s %s", r.Fault, r.Action, r.Target)
		if r.NotInjected {
			out = append(out, head+": "+r.Injected)
			continue
		}
		out = append(out, fmt.Sprintf("%s (%s) at %s, cleared %s: lowest %s, recovered %s, failed / lost / duplicates %s, p99 %s ms before, %s ms at worst",
			head, r.Resolved, r.Injected, r.Cleared, r.Dip, r.Recovery, r.Errors, r.PreP99, r.WorstP99))
		if r.Stall != "" {
			out = append(out, "  stall: "+r.Stall)
		}
		for _, n := range r.Notes {
			out = append(out, "  "+n)
		}
	}
	if v.Series != "" {
		out = append(out, "p99: the "+v.Series+" latency")
	}
	if v.Tolerance != "" {
		out = append(out, v.Tolerance)
	}
	if len(v.Settings) > 0 {
		var said []string
		for _, s := range v.Settings {
			said = append(said, s.Name+" "+s.Value)
		}
		out = append(out, "stalls weighed against the brokers' "+strings.Join(said, ", "))
	}
	return out
}

// lostText is a fault's placed losses, or "–" when they were not placed.
func lostText(lost *int64) string {
	if lost == nil {
		return "–"
	}
	return count(*lost)
}

// faultName is "#1", or "#1, repeat 2" for a repeated run's.
func faultName(f v1alpha1.FaultStatus) string {
	if f.Repeat > 0 {
		return fmt.Sprintf("#%d, repeat %d", f.Index, f.Repeat)
	}
	return fmt.Sprintf("#%d", f.Index)
}

func clockText(t *metav1.MicroTime, none string) string {
	if t == nil {
		return none
	}
	return t.UTC().Format("15:04:05 MST")
}

func secondsText(v *float64, none string) string {
	if v == nil {
		return none
	}
	return fmt.Sprintf("%.0f s", *v)
}

// recoveryText is the time to recover, with the relapses and the stable
// recovery when they differ from it.
func recoveryText(im *v1alpha1.FaultImpact) string {
	if im.RecoverySeconds == nil {
		return "not back by the end of its intervals"
	}
	t := fmt.Sprintf("%.0f s", *im.RecoverySeconds)
	if im.Relapses > 0 {
		t += fmt.Sprintf(", %d relapse%s", im.Relapses, plural(int(im.Relapses)))
		if im.StableRecoverySeconds != nil {
			t += fmt.Sprintf(", stable after %.0f s", *im.StableRecoverySeconds)
		}
	}
	if !im.Recovered {
		t += ", did not stay back"
	}
	return t
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// faultMarks are the faults' places on the run's time charts (the
// timeline's unit, from the run's first snapshot): the injection, and
// the clearing when it came.
func faultMarks(s *results.Summary, u timeUnit) []faultMark {
	start, ok := measureStart(s)
	if !ok {
		return nil
	}
	var out []faultMark
	for _, f := range faultsOf(s) {
		if !f.Injected || f.AtSeconds == nil {
			continue
		}
		m := faultMark{At: (start + *f.AtSeconds) / u.seconds, Label: fmt.Sprintf("F%d", f.Index)}
		if f.ClearedSeconds != nil {
			m.Cleared = ptr.To((start + *f.ClearedSeconds) / u.seconds)
		}
		out = append(out, m)
	}
	return out
}
