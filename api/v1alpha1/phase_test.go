package v1alpha1

import "testing"

func TestPhaseCanMoveTo(t *testing.T) {
	cases := []struct {
		from, to Phase
		want     bool
	}{
		{"", PhasePending, true},
		{PhasePending, PhaseProvisioning, true},
		{PhaseProvisioning, PhaseRunning, true},
		{PhaseRunning, PhaseCollecting, true},
		{PhaseCollecting, PhaseSucceeded, true},
		{PhasePending, PhaseRunning, true}, // existing clusters skip nothing visible but may jump
		{PhaseRunning, PhaseProvisioning, false},
		{PhaseRunning, PhaseRunning, false},
		{PhaseSucceeded, PhaseFailed, false},
		{PhaseFailed, PhaseSucceeded, false},
		{PhaseProvisioning, PhaseFailed, true},
		{PhaseFailed, PhaseFailed, false},
		{PhasePending, Phase("Bogus"), false},
		// Queued sits between Pending and Provisioning: a run may wait
		// there, and never goes back to it once it deployed.
		{PhasePending, PhaseQueued, true},
		{PhaseQueued, PhaseProvisioning, true},
		{PhaseQueued, PhaseFailed, true},
		{PhaseQueued, PhasePending, false},
		{PhaseProvisioning, PhaseQueued, false},
	}
	for _, c := range cases {
		if got := c.from.CanMoveTo(c.to); got != c.want {
			t.Errorf("%q.CanMoveTo(%q) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}
