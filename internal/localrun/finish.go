package localrun

// The run finished, as a cluster run is (internal/outcome): every
// repeat's faults with their impact, the aggregate, spec.thresholds.

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/coordinator"
	"github.com/streambench/streambench-operator/internal/cost"
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
	in := outcome.Input{Repeats: done, Repeated: o.repeats() > 1, Faults: out.Faults, Thresholds: out.Run.Spec.Thresholds, Prices: o.prices}
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

// localPrices is the run's price model in local mode: the file
// --price-model names, else spec.cost.priceModel; nil (the default list
// prices) without either. A ConfigMap (spec.cost.priceModelRef) is a
// cluster's: here its file is given with --price-model.
func localPrices(file string, run *v1alpha1.BenchmarkRun) (*cost.PriceModel, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--price-model: %w", err)
		}
		m, err := cost.Parse(b)
		if err != nil {
			return nil, fmt.Errorf("--price-model %s: %w", file, err)
		}
		return &m, nil
	}
	c := run.Spec.Cost
	switch {
	case c == nil:
		return nil, nil
	case c.PriceModel != nil:
		if err := cost.Validate(*c.PriceModel); err != nil {
			return nil, fmt.Errorf("spec.cost.priceModel: %w", err)
		}
		return c.PriceModel.DeepCopy(), nil
	case c.PriceModelRef != nil:
		return nil, fmt.Errorf("spec.cost.priceModelRef names ConfigMap %s, which local mode has no cluster to read: pass its file with --price-model", c.PriceModelRef.Name)
	}
	return nil, nil
}
