package workload

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

func f(v float64) *float64 { return &v }
func i32(v int32) *int32   { return &v }

func TestEstimate(t *testing.T) {
	// OMB's 1-topic-100-partitions-1kb-4p-4c-200k-backlog: 512 GiB at
	// 200,000 msg/s of 1 KiB takes 2684.35 s to build.
	build := time.Duration(float64(512<<30) / (200000 * 1024) * float64(time.Second))
	if build < 2684*time.Second || build > 2685*time.Second {
		t.Fatalf("build time %v: the GiB arithmetic is off", build)
	}
	margin := func(d time.Duration) time.Duration { return d + time.Duration(float64(d)*0.1) }
	for _, tc := range []struct {
		name string
		w    v1alpha1.WorkloadSpec
		want time.Duration
	}{
		{"latency test: warm-up + test + setup",
			v1alpha1.WorkloadSpec{MessageSize: 100, ProducerRate: 500, WarmupDurationMinutes: f(0.5), TestDurationMinutes: f(2)},
			margin(2*time.Minute + 30*time.Second + 10*time.Minute)},
		{"defaults: 1 + 5 minutes",
			v1alpha1.WorkloadSpec{MessageSize: 100, ProducerRate: 500},
			margin(16 * time.Minute)},
		{"max-rate search: 200 periods of 3 s and 4 holds of Pulsar's 60 s, each after a settling period",
			v1alpha1.WorkloadSpec{MessageSize: 100, WarmupDurationMinutes: f(1), TestDurationMinutes: f(5)},
			margin(16*time.Minute + 10*time.Minute + 4*(60*time.Second+3*time.Second))},
		{"max-rate search with a named hold: 4 holds of 10 s, rounded up to periods",
			v1alpha1.WorkloadSpec{MessageSize: 100, WarmupDurationMinutes: f(1), TestDurationMinutes: f(5), RateSearch: &v1alpha1.RateSearchSpec{HoldSeconds: i32(10)}},
			margin(16*time.Minute + 10*time.Minute + 4*(12*time.Second+3*time.Second))},
		{"short backlog: build twice + 2 min, 30 min drain",
			v1alpha1.WorkloadSpec{MessageSize: 1024, ProducerRate: 1024, ConsumerBacklogSizeGB: f(1.0 / 1024), WarmupDurationMinutes: f(0), TestDurationMinutes: f(1)},
			margin(11*time.Minute + 2*time.Minute + 2*time.Second + 30*time.Minute)},
		{"the study's catch-up: 512 GiB at 200k msg/s, drain as long as the build",
			v1alpha1.WorkloadSpec{MessageSize: 1024, ProducerRate: 200000, ConsumerBacklogSizeGB: f(512), WarmupDurationMinutes: f(1), TestDurationMinutes: f(5)},
			margin(16*time.Minute + 2*time.Minute + 2*build + build)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Estimate(tc.w)
			// The float arithmetic may differ by a few ns.
			if d := got - tc.want; d < -time.Microsecond || d > time.Microsecond {
				t.Errorf("Estimate = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRunDeadline(t *testing.T) {
	w := v1alpha1.WorkloadSpec{MessageSize: 100, ProducerRate: 500}
	if got, want := RunDeadline(w, v1alpha1.TimeoutsSpec{}), Estimate(w); got != want {
		t.Errorf("no spec.timeouts.run: %v, want the estimate %v", got, want)
	}
	run := &metav1.Duration{Duration: 3 * time.Minute}
	if got := RunDeadline(w, v1alpha1.TimeoutsSpec{Run: run}); got != 3*time.Minute {
		t.Errorf("spec.timeouts.run 3m: %v, want 3m", got)
	}
	if short, est := ShortTimeout(w, run); !short || est != Estimate(w) {
		t.Errorf("3m is below the %v estimate: ShortTimeout = %v", est, short)
	}
	if short, _ := ShortTimeout(w, &metav1.Duration{Duration: time.Hour}); short {
		t.Error("1h is above the estimate, ShortTimeout says it is short")
	}
	if short, _ := ShortTimeout(w, nil); short {
		t.Error("no spec.timeouts.run is never short")
	}
}

// The 512 GiB backlog's build takes about 45 min: the old warm-up + test +
// 10 min deadline (16 min) killed it. The estimate must cover the
// coordinator's own bounds on the build and the drain.
func TestEstimateCoversCoordinatorBounds(t *testing.T) {
	w := v1alpha1.WorkloadSpec{MessageSize: 1024, ProducerRate: 200000, ConsumerBacklogSizeGB: f(512)}
	if got, need := Estimate(w), BacklogBuildTimeout(w, 200000)+DrainTimeout(w)+WarmupDuration(w)+TestDuration(w); got <= need {
		t.Errorf("Estimate %v does not cover build timeout + drain timeout + phases (%v)", got, need)
	}
}
