package controllers

import (
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// TestFaultRepeatNumbers: status.faults numbers a repeated run's repeats
// from 1, as local mode does and as each repeat's directory (repeat-<n>)
// is named, while the controller counts them from 0 as the measured
// phases' starts do; a run not repeated has no number.
func TestFaultRepeatNumbers(t *testing.T) {
	for _, c := range []struct {
		repeats int32
		want    []int32
	}{{0, []int32{0}}, {1, []int32{0}}, {3, []int32{1, 2, 3}}} {
		run := &v1alpha1.BenchmarkRun{}
		run.Spec.Repeats = c.repeats
		run.Spec.Faults = []v1alpha1.Fault{{Action: v1alpha1.FaultKill, Target: "broker-0"}}
		closeFaults(run, run.Spec.RepeatCount(), "not injected")(run)
		if len(run.Status.Faults) != len(c.want) {
			t.Fatalf("repeats %d: %d entries, want %d", c.repeats, len(run.Status.Faults), len(c.want))
		}
		for rep, want := range c.want {
			if got := run.Status.Faults[rep].Repeat; got != want {
				t.Errorf("repeats %d: repeat %d (from 0) recorded as %d, want %d", c.repeats, rep, got, want)
			}
			if e := faultEntry(run, 0, rep); e != &run.Status.Faults[rep] {
				t.Errorf("repeats %d: faultEntry(0, %d) = %+v", c.repeats, rep, e)
			}
		}
	}
}
