// Package thresholds checks spec.thresholds against a run's results: the
// pass/fail a CI or GitOps pipeline gates on (condition ThresholdsMet in a
// cluster, the exit code of `streambench run --local`).
package thresholds

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/results"
)

// Check is one threshold checked.
type Check struct {
	Threshold v1alpha1.Threshold
	// Value is what was compared with the bound; Of says which value it
	// is ("" for the headline, "the interval's high end over 6 repeats",
	// "its one value: the run was not repeated").
	Value float64
	Of    string
	// Missing: the results have no such figure (a produce-only run's
	// end-to-end latency); the threshold fails, as a bound nothing held.
	Missing bool
	Met     bool
}

// String names the threshold, the value and the bound, e.g.
// "publishLatencyMs.p99 12.4 > max 10".
func (c Check) String() string {
	t := c.Threshold
	if c.Missing {
		return fmt.Sprintf("%s: not in the results (the run measured no such figure)", t.Figure)
	}
	op, bound := "<=", "max"
	limit := t.Max
	if t.Min != nil {
		op, bound, limit = ">=", "min", t.Min
	}
	if limit == nil {
		return fmt.Sprintf("%s: no max or min (admission refuses such a threshold)", t.Figure)
	}
	if !c.Met {
		op = map[string]string{"<=": ">", ">=": "<"}[op]
	}
	s := fmt.Sprintf("%s %s %s %s %s", t.Figure, num(c.Value), op, bound, num(*limit))
	if c.Of != "" {
		s += " (" + c.Of + ")"
	}
	return s
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// Outcome is every threshold of a run, checked.
type Outcome struct {
	Checks []Check
}

// Failed are the checks that did not hold.
func (o Outcome) Failed() []Check {
	var out []Check
	for _, c := range o.Checks {
		if !c.Met {
			out = append(out, c)
		}
	}
	return out
}

// Met is true when every threshold held (and there was at least one).
func (o Outcome) Met() bool { return len(o.Checks) > 0 && len(o.Failed()) == 0 }

// Message is the condition's message: each failed threshold with its
// value, or that all held.
func (o Outcome) Message() string {
	failed := o.Failed()
	if len(failed) == 0 {
		var held []string
		for _, c := range o.Checks {
			held = append(held, c.String())
		}
		return fmt.Sprintf("all %d thresholds met: %s", len(o.Checks), strings.Join(held, "; "))
	}
	var parts []string
	for _, c := range failed {
		parts = append(parts, c.String())
	}
	return fmt.Sprintf("%d of %d thresholds failed: %s", len(failed), len(o.Checks), strings.Join(parts, "; "))
}

// Display is status.display.thresholds: "met" or "N failed".
func (o Outcome) Display() string {
	if n := len(o.Failed()); n > 0 {
		return fmt.Sprintf("%d failed", n)
	}
	return "met"
}

// Evaluate checks each threshold against the summary's headline (for a
// repeated run, the medians; with OnConfidenceBound, the far end of the
// figure's interval).
func Evaluate(ths []v1alpha1.Threshold, s *results.Summary) Outcome {
	var o Outcome
	for _, t := range ths {
		o.Checks = append(o.Checks, check(t, s))
	}
	return o
}

func check(t v1alpha1.Threshold, s *results.Summary) Check {
	c := Check{Threshold: t}
	r := s.Results
	switch t.Figure {
	case "lost":
		c.Value = float64(r.Lost)
	case "notConsumed":
		c.Value = float64(r.NotConsumed)
	case "duplicates":
		c.Value = float64(r.Duplicates)
	default:
		f, ok := results.FigureOf(t.Figure)
		if !ok {
			c.Missing = true
			return c
		}
		v, has := f.Of(r)
		if !has {
			c.Missing = true
			return c
		}
		c.Value = v
		if t.OnConfidenceBound {
			iv, repeated := s.Interval(f)
			switch {
			case !repeated:
				c.Of = "its one value: the run was not repeated, so it has no interval"
			case t.Max != nil:
				c.Value, c.Of = iv.High, fmt.Sprintf("the high end of its %.1f %% interval over %d repeats", 100*iv.Confidence, iv.N)
			default:
				c.Value, c.Of = iv.Low, fmt.Sprintf("the low end of its %.1f %% interval over %d repeats", 100*iv.Confidence, iv.N)
			}
		} else if len(s.Repeats) > 1 {
			c.Of = fmt.Sprintf("the median of %d repeats", len(s.Repeats))
		}
	}
	switch {
	case t.Max != nil:
		c.Met = c.Value <= *t.Max
	case t.Min != nil:
		c.Met = c.Value >= *t.Min
	}
	return c
}
