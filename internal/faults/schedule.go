package faults

import (
	"sort"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// StepKind is what a step of a schedule does: start a fault, or end one
// (a Pause's SIGCONT).
type StepKind int

const (
	// Inject carries out the fault's action.
	Inject StepKind = iota
	// Clear ends a Pause (SIGCONT); only a Pause has one.
	Clear
)

func (k StepKind) String() string {
	if k == Clear {
		return "clear"
	}
	return "inject"
}

// Step is one thing to do at an offset of the measured phase.
type Step struct {
	// Index is the fault's place in spec.faults.
	Index int
	Kind  StepKind
	// Offset is from the start of the measured phase.
	Offset time.Duration
	Fault  v1alpha1.Fault
}

// Schedule orders spec.faults into steps: each fault's injection at `at`
// and, for a Pause, its clearing at `at` + duration, by offset. At the same
// offset a clearing goes first, so a pause that ends as another fault
// begins on the same process has let it go before (Validate refuses only
// overlapping pauses), then faults in spec order. Pure.
func Schedule(fs []v1alpha1.Fault) []Step {
	var steps []Step
	for i, f := range fs {
		steps = append(steps, Step{Index: i, Kind: Inject, Offset: f.At.Duration, Fault: f})
		if f.Action == v1alpha1.FaultPause && f.Duration != nil {
			steps = append(steps, Step{Index: i, Kind: Clear, Offset: f.At.Duration + f.Duration.Duration, Fault: f})
		}
	}
	sort.SliceStable(steps, func(a, b int) bool {
		sa, sb := steps[a], steps[b]
		if sa.Offset != sb.Offset {
			return sa.Offset < sb.Offset
		}
		if sa.Kind != sb.Kind {
			return sa.Kind == Clear
		}
		return sa.Index < sb.Index
	})
	return steps
}

// Due is how far the steps from next on are due at elapsed (time since
// the measured phase started): steps[next:end] are, steps[end:] not yet.
// Pure.
func Due(steps []Step, next int, elapsed time.Duration) (end int) {
	end = next
	for end < len(steps) && steps[end].Offset <= elapsed {
		end++
	}
	return end
}

// Interval is the stats interval of a run with faults, where no other is
// asked for: a fault's figures are at the intervals' resolution, and the
// recovery bar is 3 intervals in a row, 30 s at the usual 10 s (longer
// than most failovers; a fault late in the phase could never be seen to
// recover) but 6 s at 2 s. The whole-run figures do not depend on it.
const Interval = 2 * time.Second
