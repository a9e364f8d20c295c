package v1alpha1

// Phase is where a run is in its life. Phases only move forward.
// +kubebuilder:validation:Enum=Pending;Provisioning;Running;Collecting;Succeeded;Failed
type Phase string

const (
	PhasePending      Phase = "Pending"
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
	PhaseProvisioning: 2,
	PhaseRunning:      3,
	PhaseCollecting:   4,
	PhaseSucceeded:    5,
	PhaseFailed:       5,
}

// Finished reports whether the phase is terminal.
func (p Phase) Finished() bool { return p == PhaseSucceeded || p == PhaseFailed }

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
