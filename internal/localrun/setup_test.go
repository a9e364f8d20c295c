package localrun

import (
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/faults"
)

// TestSnapshotInterval: the interval asked for wins; unasked, a run with
// faults measures in faults.Interval, one without in OMB's 10 s.
func TestSnapshotInterval(t *testing.T) {
	withFaults := &v1alpha1.BenchmarkRun{Spec: v1alpha1.BenchmarkRunSpec{Faults: []v1alpha1.Fault{{Action: v1alpha1.FaultKill, Target: "broker-1"}}}}
	for _, tc := range []struct {
		name  string
		asked time.Duration
		run   *v1alpha1.BenchmarkRun
		want  time.Duration
	}{
		{"asked", 5 * time.Second, withFaults, 5 * time.Second},
		{"faults, not asked", 0, withFaults, faults.Interval},
		{"no faults, not asked", 0, &v1alpha1.BenchmarkRun{}, 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := snapshotInterval(tc.asked, tc.run); got != tc.want {
				t.Errorf("snapshotInterval(%s) = %s, want %s", tc.asked, got, tc.want)
			}
		})
	}
}
