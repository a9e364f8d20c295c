package workload

import (
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// The load generator's bounds on a run, in one place so the coordinator
// (its own timeouts), the controller (the Jobs' activeDeadlineSeconds) and
// local mode (its run context) agree on them.
const (
	// SetupAllowance covers what every run does besides the load: topic
	// creation, clients, clock offsets, the probe (2 min at most), the
	// final drain after the load stopped (3 min or more: at least 2 min for
	// consumers still receiving, a minute more to tell a stalled one; a
	// larger backlog gets longer, within what the deadline leaves), the
	// final read and the cleanup (3 min at most).
	SetupAllowance = 10 * time.Minute
	// RateSearchPeriod and RateSearchMaxPeriods bound the max-rate search
	// (producerRate 0): OMB's 3 s evaluation period, and a search that has
	// not converged after 200 periods ends unconverged.
	RateSearchPeriod     = 3 * time.Second
	RateSearchMaxPeriods = 200
	// deadlineMargin is the share added on top of the estimate: brokers
	// slower than the workload asks for stretch every phase a little.
	deadlineMargin = 0.10
)

// BacklogBuildTimeout bounds building the backlog at rate msg/s: twice the
// time the rate needs, plus BacklogBuildSlack (0 without a backlog or rate).
func BacklogBuildTimeout(w v1alpha1.WorkloadSpec, rate float64) time.Duration {
	b := BacklogBytes(w)
	if b == 0 || !(rate > 0) || w.MessageSize <= 0 {
		return 0
	}
	return BacklogBuildSlack + 2*seconds(float64(b)/(rate*float64(w.MessageSize)))
}

// DrainTimeout bounds the drain of the backlog: DefaultDrainTimeout, or,
// for a backlog the producers need longer than that to build, that build
// time (consumers that read no faster than the producers wrote need as long).
func DrainTimeout(w v1alpha1.WorkloadSpec) time.Duration {
	return max(DefaultDrainTimeout, BacklogBuildTime(w))
}

// RateSearchTime bounds the max-rate search (0 for a fixed producerRate):
// its budget of periods (RateSearchPeriods) for the longest hold w may
// have.
func RateSearchTime(w v1alpha1.WorkloadSpec) time.Duration {
	if !IsMaxRate(w) {
		return 0
	}
	return time.Duration(RateSearchPeriods(maxRateHold(w))) * RateSearchPeriod
}

// Estimate is the longest a healthy run of w takes: warm-up, the rate
// search, the backlog build at producerRate and its drain, the measured
// phase and SetupAllowance, plus a 10 % margin.
func Estimate(w v1alpha1.WorkloadSpec) time.Duration {
	d := WarmupDuration(w) + TestDuration(w) + RateSearchTime(w) + SetupAllowance
	if IsBacklog(w) {
		d += BacklogBuildTimeout(w, float64(w.ProducerRate)) + DrainTimeout(w)
	}
	return d + seconds(d.Seconds()*deadlineMargin)
}

// RunDeadline bounds a run's load generator: spec.timeouts.run when set
// (the user's choice, even below the estimate: the controller says so in a
// condition), else Estimate. The controller's worker and coordinator Jobs,
// local mode's run and the coordinator all use it.
func RunDeadline(w v1alpha1.WorkloadSpec, timeouts v1alpha1.TimeoutsSpec) time.Duration {
	if t := timeouts.Run; t != nil {
		return t.Duration
	}
	return Estimate(w)
}

// ShortTimeout reports whether spec.timeouts.run is set below the estimate,
// and the estimate.
func ShortTimeout(w v1alpha1.WorkloadSpec, run *metav1.Duration) (bool, time.Duration) {
	est := Estimate(w)
	return run != nil && run.Duration < est, est
}

// seconds converts to a Duration, capped at the largest one.
func seconds(s float64) time.Duration {
	ns := s * float64(time.Second)
	if ns >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	if !(ns > 0) {
		return 0
	}
	return time.Duration(ns)
}
