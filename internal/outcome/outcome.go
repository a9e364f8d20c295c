// Package outcome is how a run is finished, the same in both modes: given
// its repeats' summaries as the coordinator wrote them, each repeat's
// measured-phase start, the faults' records and spec.thresholds, it
// returns what the finished run says — each fault with its impact, each
// repeat's summary and the run's with their faults, the thresholds'
// verdict and the run's message. Writing it is an adapter on each side:
// the controller's into the results ConfigMap and the status
// (configmap.go), local mode's into the results directory
// (internal/localrun). Pure: no clock, no I/O.
package outcome

import (
	"errors"
	"fmt"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/cost"
	"github.com/streambench/streambench-operator/internal/faultimpact"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/thresholds"
)

// Repeat is one repeat's results as its coordinator summarized them (no
// faults: the coordinator does not inject them in a cluster).
type Repeat struct {
	// Summary is nil when the repeat's results were not kept: Unreadable
	// says why (left out of a ConfigMap to fit, or not parseable).
	Summary    *results.Summary
	Unreadable error
	// MeasureStart is when its measured phase started, by the clock the
	// faults were scheduled by (the coordinator's OnMeasure); zero when it
	// was never recorded, and then its faults get no figures.
	MeasureStart time.Time
}

// Input is what a finished run is made of.
type Input struct {
	// Repeats in the order run; one for a run not repeated.
	Repeats []Repeat
	// Repeated says the run was asked to repeat (spec.repeats or local
	// mode's --repeats above 1), even when fewer repeats have results:
	// the faults are numbered from 1 then (v1alpha1.FaultRepeat).
	Repeated bool
	// Aggregate is a repeated run's summary of two or more repeats
	// (results.Aggregate); nil otherwise.
	Aggregate *results.Summary
	// Faults are the faults' records, every repeat's, in the order
	// status.faults has them; their impact is filled here.
	Faults     []v1alpha1.FaultStatus
	Thresholds []v1alpha1.Threshold
	// Prices is the run's price model (local mode's --price-model, a
	// cluster run's spec.cost); nil is cost.Default().
	Prices *cost.PriceModel
}

// Outcome is what a finished run says.
type Outcome struct {
	// Repeats are each repeat's summary with its faults (nil where the
	// input's was); Summary is the run's: the aggregate, or the one
	// repeat's.
	Repeats []*results.Summary
	Summary *results.Summary
	// Faults are the input's, in its order, each injected one with its
	// impact or a note saying why it has none.
	Faults []v1alpha1.FaultStatus
	// Thresholds is spec.thresholds checked on Summary; nil without any.
	Thresholds *thresholds.Outcome
}

// Finish finishes a run. The inputs are not changed.
func Finish(in Input) (*Outcome, error) {
	if len(in.Repeats) == 0 {
		return nil, errors.New("outcome: a run with no repeat has nothing to finish")
	}
	if in.Aggregate == nil && len(in.Repeats) > 1 {
		return nil, fmt.Errorf("outcome: %d repeats but no aggregate", len(in.Repeats))
	}
	out := &Outcome{Faults: cloneFaults(in.Faults)}
	for i, r := range in.Repeats {
		sum, faults := FinishRepeat(r, v1alpha1.FaultRepeat(in.Repeated, i), out.Faults, in.Prices)
		out.Repeats = append(out.Repeats, sum)
		out.Faults = faults
	}
	if in.Aggregate != nil {
		agg := *in.Aggregate
		// Every repeat's faults, each naming its repeat (as status.faults).
		agg.Faults = cloneFaults(out.Faults)
		// Its cost from the repeats' median resources (each repeat's
		// summary has its own).
		withCostOf(&agg, repeatsResources(out.Repeats), in.Prices)
		out.Summary = &agg
	} else {
		out.Summary = out.Repeats[0]
	}
	if out.Summary == nil {
		return nil, fmt.Errorf("outcome: the run's only repeat has no results: %v", in.Repeats[0].Unreadable)
	}
	if len(in.Thresholds) > 0 {
		o := thresholds.Evaluate(in.Thresholds, out.Summary)
		out.Thresholds = &o
	}
	return out, nil
}

// FinishRepeat is one repeat finished: faults (every repeat's) with the
// impact of those of this repeat (status.faults' number repeat) filled in
// from its series, and its summary, a copy, holding them and its cost
// under prices (nil: cost.Default()). A repeat whose
// figures cannot be had leaves its injected faults a note saying why.
func FinishRepeat(r Repeat, repeat int32, faults []v1alpha1.FaultStatus, prices *cost.PriceModel) (*results.Summary, []v1alpha1.FaultStatus) {
	faults = cloneFaults(faults)
	var mine []int
	for i, f := range faults {
		if f.Repeat == repeat {
			mine = append(mine, i)
		}
	}
	if r.Summary == nil {
		note(faults, mine, fmt.Sprintf("no figures: the repeat's results are unreadable: %v", r.Unreadable))
		return nil, faults
	}
	sum := *r.Summary
	withCost(&sum, prices)
	if len(mine) == 0 {
		sum.Faults = nil
		return &sum, faults
	}
	if !r.MeasureStart.IsZero() {
		own := make([]v1alpha1.FaultStatus, len(mine))
		for j, i := range mine {
			own[j] = faults[i]
		}
		filled, err := faultimpact.Fill(&sum, r.MeasureStart, own)
		if err != nil {
			note(faults, mine, "no figures: "+err.Error())
		} else {
			for j, i := range mine {
				faults[i] = filled[j]
			}
		}
	}
	sum.Faults = make([]v1alpha1.FaultStatus, 0, len(mine))
	for _, i := range mine {
		sum.Faults = append(sum.Faults, *faults[i].DeepCopy())
	}
	return &sum, faults
}

// Message is the run's one line: what it published, and the thresholds'
// verdict when it had any (the Succeeded condition's message).
func (o *Outcome) Message() string {
	r := o.Summary.Results
	msg := fmt.Sprintf("published %.1f MB/s, publish p99 %.2f ms", r.PublishMBPerSec, r.PublishLatencyMs.P99)
	if o.Thresholds != nil {
		msg += "; thresholds " + o.Thresholds.Display()
	}
	return msg
}

// note gives each injected fault at idx without figures the note why.
func note(faults []v1alpha1.FaultStatus, idx []int, why string) {
	for _, i := range idx {
		if f := &faults[i]; f.Injected && f.Impact == nil {
			f.Impact = &v1alpha1.FaultImpact{Notes: []string{why}}
		}
	}
}

func cloneFaults(fs []v1alpha1.FaultStatus) []v1alpha1.FaultStatus {
	if fs == nil {
		return nil
	}
	out := make([]v1alpha1.FaultStatus, len(fs))
	for i := range fs {
		out[i] = *fs[i].DeepCopy()
	}
	return out
}
