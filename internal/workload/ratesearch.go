package workload

import (
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// What the max-rate search calls sustainable (spec.workload.rateSearch).
const (
	// KafkaRateHold is how long a rate must hold on Kafka: Linux writes a
	// dirty page back once it is 30 s old (vm.dirty_expire_centisecs 3000)
	// on a flusher that wakes every 5 s (vm.dirty_writeback_centisecs 500),
	// so the first write-back of a rate's data starts within 35 s of the
	// rate; a window shorter than that judges the page cache, not the disk.
	KafkaRateHold = 35 * time.Second
	// PulsarRateHold: BookKeeper flushes its ledger storage (entry logs,
	// index, the write cache) every flushInterval, 60 s in the
	// bookkeeper.conf that Pulsar ships and its chart uses.
	PulsarRateHold = 60 * time.Second
	// DefaultMaxP99Latency bounds the corrected p99 publish latency of a
	// sustainable rate when the workload names no bound: far above what a
	// system with short queues shows, reached within seconds by one that
	// falls behind (its corrected latency grows with the queue).
	DefaultMaxP99Latency = time.Second
	// RateSearchHolds is how many hold windows a search's budget allows
	// beyond its RateSearchMaxPeriods short periods: the first try, and
	// lowered rates after failed holds.
	RateSearchHolds = 4
)

// RateHold is how long the max-rate search holds the rate it found before
// it accepts it: rateSearch.holdSeconds, or the system's write-back window
// (KafkaRateHold, PulsarRateHold).
func RateHold(w v1alpha1.WorkloadSpec, system v1alpha1.System) time.Duration {
	if rs := w.RateSearch; rs != nil && rs.HoldSeconds != nil {
		return time.Duration(*rs.HoldSeconds) * time.Second
	}
	if system == v1alpha1.SystemPulsar {
		return PulsarRateHold
	}
	return KafkaRateHold
}

// maxRateHold is the longest RateHold of w on any system, for the
// deadline, which is computed without the system.
func maxRateHold(w v1alpha1.WorkloadSpec) time.Duration {
	return max(RateHold(w, v1alpha1.SystemKafka), RateHold(w, v1alpha1.SystemPulsar))
}

// RateMaxP99Latency is the bound on the corrected p99 publish latency of a
// sustainable rate: rateSearch.maxP99LatencyMs, or DefaultMaxP99Latency.
func RateMaxP99Latency(w v1alpha1.WorkloadSpec) time.Duration {
	if rs := w.RateSearch; rs != nil && rs.MaxP99LatencyMs != nil {
		return seconds(*rs.MaxP99LatencyMs / 1000)
	}
	return DefaultMaxP99Latency
}

// RateSearchPeriods is the search's budget in periods of RateSearchPeriod:
// RateSearchMaxPeriods short periods plus RateSearchHolds holds of hold.
func RateSearchPeriods(hold time.Duration) int {
	per := int((hold + RateSearchPeriod - 1) / RateSearchPeriod)
	return RateSearchMaxPeriods + RateSearchHolds*(per+1)
}
