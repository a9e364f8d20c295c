package localrun

// The run finished, as a cluster run is (internal/outcome): every
// repeat's faults with their impact, the aggregate, spec.thresholds.

import (
	"errors"
	"fmt"
	"io"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/coordinator"
	"github.com/streambench/streambench-operator/internal/outcome"
	"github.com/streambench/streambench-operator/internal/report"
	"github.com/streambench/streambench-operator/internal/results"
)

// ErrThresholds is the error of a run whose results failed a bound of
// spec.thresholds.
var ErrThresholds = errors.New("thresholds failed")

// gate prints spec.thresholds checked on what the run wrote (a repeated
// run's aggregate), as the controller's condition ThresholdsMet.
func gate(w io.Writer, run *v1alpha1.BenchmarkRun, out *Outcome) error {
	if out.Thresholds == nil {
		return nil
	}
	o := *out.Thresholds
	for _, c := range o.Checks {
		verdict := "met   "
		if !c.Met {
			verdict = "FAILED"
		}
		fmt.Fprintf(w, "threshold   %s %s\n", verdict, c)
	}
	if !o.Met() {
		return fmt.Errorf("%w: %s", ErrThresholds, o.Message())
	}
	return nil
}

// conclude finishes the run as a cluster run is finished
// (internal/outcome): every repeat's faults with their impact, the
// thresholds' verdict, and for a repeated run the aggregate of its
// repeats as dir's summary.json (the median of each figure in its
// interval, results.Aggregate), printed. done are the repeats with
// results, as the coordinator summarized them; dirs their directories.
func conclude(o Options, out *Outcome, done []outcome.Repeat, dirs []string) error {
	if len(done) == 0 {
		return nil
	}
	in := outcome.Input{Repeats: done, Repeated: o.repeats() > 1, Faults: out.Faults, Thresholds: out.Run.Spec.Thresholds}
	if len(done) >= 2 {
		sums := make([]*results.Summary, len(done))
		for i, r := range done {
			sums[i] = r.Summary
		}
		agg, err := results.Aggregate(sums, dirs)
		if err != nil {
			return err
		}
		in.Aggregate = agg
	}
	fin, err := outcome.Finish(in)
	if err != nil {
		return err
	}
	out.Faults, out.Summary, out.Thresholds = fin.Faults, fin.Summary, fin.Thresholds
	if in.Aggregate == nil {
		return nil
	}
	if err := coordinator.WriteSummary(out.Dir, fin.Summary); err != nil {
		return fmt.Errorf("writing the repeated run's summary: %w", err)
	}
	out.Report, err = report.RenderDir(out.Dir)
	if err != nil {
		err = fmt.Errorf("writing the repeated run's HTML report: %w", err)
	}
	PrintRepeats(o.Stdout, fin.Summary, out.Dir, out.Report)
	return err
}
