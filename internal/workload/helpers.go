package workload

import (
	"math"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// The helpers below read a workload for the load generator. They expect a
// defaulted spec but fall back to the CRD default for an unset field, so
// they never dereference nil.

// BytesPerGB is OMB's "GB": consumerBacklogSizeGB counts GiB. OMB's
// WorkloadGenerator computes the backlog as consumerBacklogSizeGB * 1024 *
// 1024 * 1024 bytes, so a file that asks for 512 builds 549.8 * 10^9 bytes;
// counting 10^9 would build a backlog 7 % smaller than OMB's for the same file.
const BytesPerGB = 1 << 30

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

// BacklogBytes is consumerBacklogSizeGB in bytes (GiB, 2^30 bytes, as OMB
// multiplies); 0 when no backlog is asked for.
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

// The load generator's default bounds on a backlog test, here so the
// coordinator and the Jobs' deadline (internal/provision/workers) agree: the
// build may take twice BacklogBuildTime plus BacklogBuildSlack, the drain
// DefaultDrainTimeout.
const (
	BacklogBuildSlack   = 2 * time.Minute
	DefaultDrainTimeout = 30 * time.Minute
)

// BacklogBuildTime is how long the producers need, at producerRate, to
// publish BacklogBytes; 0 without a backlog or without a fixed rate.
// The coordinator's build timeout and the Jobs' deadline grow with it, so a
// 512 GiB backlog is not cut off by a deadline sized for a latency test.
func BacklogBuildTime(w v1alpha1.WorkloadSpec) time.Duration {
	b := BacklogBytes(w)
	if b == 0 || w.ProducerRate <= 0 || w.MessageSize <= 0 {
		return 0
	}
	secs := float64(b) / (float64(w.ProducerRate) * float64(w.MessageSize))
	if secs*float64(time.Second) >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(secs * float64(time.Second))
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

// ReadsPayloadFile says whether a workload's payloadFile is read at all. As in
// OMB (WorkloadGenerator.run: randomized payloads are built when
// useRandomizedPayloads is true, and only otherwise is payloadFile loaded),
// randomized payloads win and the file is then never opened: OMB's own
// 10-topic-16-partition-1kb.yaml names a payloadFile and sets
// useRandomizedPayloads, and must load as OMB loads it.
func ReadsPayloadFile(w v1alpha1.WorkloadSpec) bool {
	return w.PayloadFile != "" && !w.UseRandomizedPayloads
}
