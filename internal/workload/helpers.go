package workload

import (
	"math"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// The helpers below read a workload for the load generator. They expect a
// defaulted spec but fall back to the CRD default for an unset field, so
// they never dereference nil.

// BytesPerGB is OMB's GB: consumerBacklogSizeGB counts 10^9 bytes.
const BytesPerGB = 1_000_000_000

// TestDuration is the measured phase (testDurationMinutes).
func TestDuration(w v1alpha1.WorkloadSpec) time.Duration {
	return minutes(w.TestDurationMinutes, DefaultTestDurationMinutes)
}

// WarmupDuration is the discarded warm-up before the measured phase
// (warmupDurationMinutes).
func WarmupDuration(w v1alpha1.WorkloadSpec) time.Duration {
	return minutes(w.WarmupDurationMinutes, DefaultWarmupDurationMinutes)
}

// minutes converts fractional minutes to a Duration, rounded to the
// nanosecond and capped at the largest Duration (about 292 years).
func minutes(p *float64, def float64) time.Duration {
	m := def
	if p != nil {
		m = *p
	}
	ns := math.Round(m * float64(time.Minute))
	if ns >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	if !(ns > 0) {
		return 0
	}
	return time.Duration(ns)
}

// BacklogBytes is consumerBacklogSizeGB in bytes (GB = 10^9 bytes, as OMB);
// 0 when no backlog is asked for.
func BacklogBytes(w v1alpha1.WorkloadSpec) int64 {
	if w.ConsumerBacklogSizeGB == nil || !(*w.ConsumerBacklogSizeGB > 0) {
		return 0
	}
	b := math.Round(*w.ConsumerBacklogSizeGB * BytesPerGB)
	if b >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(b)
}

// BacklogDrainRatio is the fraction of the backlog that must drain (0..1).
func BacklogDrainRatio(w v1alpha1.WorkloadSpec) float64 {
	if w.BacklogDrainRatio == nil {
		return DefaultBacklogDrainRatio
	}
	return *w.BacklogDrainRatio
}

// IsBacklog reports a backlog test: consumers pause until
// consumerBacklogSizeGB is built, then the drain is measured.
func IsBacklog(w v1alpha1.WorkloadSpec) bool { return BacklogBytes(w) > 0 }

// IsMixed reports streambench's mixed workload: catch-up subscriptions drain
// the backlog while the tailing subscriptions keep reading.
func IsMixed(w v1alpha1.WorkloadSpec) bool { return w.Mixed != nil }

// IsMaxRate reports producerRate 0: search the maximum sustainable rate
// instead of publishing at a fixed rate.
func IsMaxRate(w v1alpha1.WorkloadSpec) bool { return w.ProducerRate == 0 }

// IsProduceOnly reports a run with no consumers at all (OMB still reserves
// consumer workers for it, #405; the load generator need not).
func IsProduceOnly(w v1alpha1.WorkloadSpec) bool { return TotalConsumers(w) == 0 }

// SubscriptionsPerTopic is the number of tailing subscriptions per topic.
func SubscriptionsPerTopic(w v1alpha1.WorkloadSpec) int {
	if w.SubscriptionsPerTopic == nil {
		return int(DefaultSubscriptionsPerTopic)
	}
	return int(*w.SubscriptionsPerTopic)
}

// CatchUpSubscriptionsPerTopic is the number of catch-up subscriptions per
// topic of a mixed workload; 0 when the workload is not mixed.
func CatchUpSubscriptionsPerTopic(w v1alpha1.WorkloadSpec) int {
	if w.Mixed == nil {
		return 0
	}
	if w.Mixed.CatchUpSubscriptionsPerTopic == 0 {
		return int(DefaultCatchUpSubscriptionsPerTopic)
	}
	return int(w.Mixed.CatchUpSubscriptionsPerTopic)
}

// TotalPartitions is topics x partitionsPerTopic.
func TotalPartitions(w v1alpha1.WorkloadSpec) int {
	return orDefault(w.Topics, DefaultTopics) * orDefault(w.PartitionsPerTopic, DefaultPartitionsPerTopic)
}

// TotalProducers is topics x producersPerTopic.
func TotalProducers(w v1alpha1.WorkloadSpec) int {
	return orDefault(w.Topics, DefaultTopics) * orDefault(w.ProducersPerTopic, DefaultProducersPerTopic)
}

// TotalConsumers is the number of consumers over all topics: every
// subscription, tailing and catch-up alike, has consumerPerSubscription
// consumers.
func TotalConsumers(w v1alpha1.WorkloadSpec) int {
	subs := SubscriptionsPerTopic(w) + CatchUpSubscriptionsPerTopic(w)
	return orDefault(w.Topics, DefaultTopics) * subs * orDefault(w.ConsumerPerSubscription, DefaultConsumerPerSubscription)
}

func orDefault(v, def int32) int {
	if v == 0 {
		return int(def)
	}
	return int(v)
}
