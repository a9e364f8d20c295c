package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Phase is where a run is in its life. Phases only move forward.
// Queued is between Pending and Provisioning: a managed run whose checks
// passed waits there for an earlier run on the same nodes, or for their
// disks to be freed (internal/runqueue; condition Queued says which).
// +kubebuilder:validation:Enum=Pending;Queued;Provisioning;Running;Collecting;Succeeded;Failed
type Phase string

const (
	PhasePending      Phase = "Pending"
	PhaseQueued       Phase = "Queued"
	PhaseProvisioning Phase = "Provisioning"
	PhaseRunning      Phase = "Running"
	PhaseCollecting   Phase = "Collecting"
	PhaseSucceeded    Phase = "Succeeded"
	PhaseFailed       Phase = "Failed"
)

// order ranks the phases; Succeeded and Failed share the last rank, so
// neither can follow the other.
var order = map[Phase]int{
	"":                0,
	PhasePending:      1,
	PhaseQueued:       2,
	PhaseProvisioning: 3,
	PhaseRunning:      4,
	PhaseCollecting:   5,
	PhaseSucceeded:    6,
	PhaseFailed:       6,
}

// Finished reports whether the phase is terminal.
func (p Phase) Finished() bool { return p == PhaseSucceeded || p == PhaseFailed }

// WantsTeardown says whether spec.teardown.policy removes the brokers of
// the run as it finished: the controller's teardown and the run queue
// (internal/runqueue: a finished run holds its nodes until torn down) ask
// the same question.
func (r *BenchmarkRun) WantsTeardown() bool {
	switch r.Spec.Teardown.Policy {
	case TeardownNever:
		return false
	case TeardownOnSuccess:
		return r.Status.Phase == PhaseSucceeded
	default:
		return true
	}
}

// CanMoveTo reports whether a run in phase p may move to next. Only forward
// moves are allowed, and Failed may interrupt any phase that is not finished.
// This keeps a stale cache from sending a run backwards.
func (p Phase) CanMoveTo(next Phase) bool {
	if p.Finished() {
		return false
	}
	if next == PhaseFailed {
		return true
	}
	from, ok1 := order[p]
	to, ok2 := order[next]
	return ok1 && ok2 && to > from
}

// entry is the field of t that records phase p (nil for the empty phase).
func (t *PhaseTimes) entry(p Phase) **metav1.Time {
	switch p {
	case PhasePending:
		return &t.Pending
	case PhaseQueued:
		return &t.Queued
	case PhaseProvisioning:
		return &t.Provisioning
	case PhaseRunning:
		return &t.Running
	case PhaseCollecting:
		return &t.Collecting
	case PhaseSucceeded, PhaseFailed:
		return &t.Finished
	}
	return nil
}

// EnteredAt is when the run entered phase p, and whether it is known.
func (s *BenchmarkRunStatus) EnteredAt(p Phase) (time.Time, bool) {
	if s.PhaseTimes == nil {
		return time.Time{}, false
	}
	if e := s.PhaseTimes.entry(p); e != nil && *e != nil {
		return (*e).Time, true
	}
	return time.Time{}, false
}

// recordEntry stamps the entry into p with now, once.
func (s *BenchmarkRunStatus) recordEntry(p Phase, now metav1.Time) {
	if s.PhaseTimes == nil {
		s.PhaseTimes = &PhaseTimes{}
	}
	if e := s.PhaseTimes.entry(p); e != nil && *e == nil {
		*e = &now
	}
}
