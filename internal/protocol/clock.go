package protocol

import "errors"

// ClockSample is one round trip to a worker's time endpoint: the
// coordinator's clock when it sent the request and when the answer came
// back, and the worker's clock in the answer (all µs since the Unix epoch).
type ClockSample struct {
	SentMicros     int64 `json:"sentMicros"`
	WorkerMicros   int64 `json:"workerMicros"`
	ReceivedMicros int64 `json:"receivedMicros"`
}

// ClockOffset is a worker's clock minus the coordinator's clock. The true
// offset lies within ±UncertaintyMicros of OffsetMicros (half the round
// trip of the best sample).
type ClockOffset struct {
	OffsetMicros      int64 `json:"offsetMicros"`
	UncertaintyMicros int64 `json:"uncertaintyMicros"`
	RTTMicros         int64 `json:"rttMicros"`
	Samples           int   `json:"samples"`
}

// EstimateOffset takes the sample with the smallest round trip, as NTP
// does: its worker time was read somewhere inside the round trip, so
// assuming the middle errs by at most half of it, and the fastest round
// trip is the one least disturbed by queueing.
func EstimateOffset(samples []ClockSample) (ClockOffset, error) {
	best := -1
	var bestRTT int64
	for i, s := range samples {
		rtt := s.ReceivedMicros - s.SentMicros
		if rtt < 0 {
			continue // the coordinator's clock stepped back; useless sample
		}
		if best < 0 || rtt < bestRTT {
			best, bestRTT = i, rtt
		}
	}
	if best < 0 {
		return ClockOffset{}, errors.New("no usable clock sample: every round trip had a negative duration (did the coordinator's clock step?)")
	}
	s := samples[best]
	mid := s.SentMicros + bestRTT/2
	return ClockOffset{
		OffsetMicros:      s.WorkerMicros - mid,
		UncertaintyMicros: (bestRTT + 1) / 2,
		RTTMicros:         bestRTT,
		Samples:           len(samples),
	}, nil
}
