package v1alpha1

// ThresholdFigure names one figure of status.results a threshold bounds:
// a field of ResultsSummary, latencies by their distribution's field.
// +kubebuilder:validation:Enum=publishRateMsgPerSec;publishMBPerSec;consumeMBPerSec;publishLatencyMs.avg;publishLatencyMs.p50;publishLatencyMs.p99;publishLatencyMs.p999;publishLatencyMs.p9999;publishLatencyMs.max;correctedLatencyMs.avg;correctedLatencyMs.p50;correctedLatencyMs.p99;correctedLatencyMs.p999;correctedLatencyMs.p9999;correctedLatencyMs.max;endToEndLatencyMs.avg;endToEndLatencyMs.p50;endToEndLatencyMs.p99;endToEndLatencyMs.p999;endToEndLatencyMs.p9999;endToEndLatencyMs.max;lost;notConsumed;duplicates
type ThresholdFigure string

// Threshold is a bound a pipeline can gate on: one figure of the run's
// results at most Max or at least Min, checked when the run finishes
// (condition ThresholdsMet, `streambench run --local`'s exit code).
// +kubebuilder:validation:XValidation:rule="has(self.max) != has(self.min)",message="a threshold sets exactly one of max (the figure must be at most this) or min (at least this)"
type Threshold struct {
	// Figure is the figure of status.results, e.g. publishLatencyMs.p99
	// (ms), correctedLatencyMs.p999 (ms), publishRateMsgPerSec, lost.
	Figure ThresholdFigure `json:"figure"`
	// Max: the figure must be at most this (latencies, lost).
	// +optional
	Max *float64 `json:"max,omitempty"`
	// Min: the figure must be at least this (throughput).
	// +optional
	Min *float64 `json:"min,omitempty"`
	// OnConfidenceBound checks a repeated run's figure at the far end of
	// its interval (the high end against max, the low end against min)
	// instead of its median: met only when the repeats show the bound is
	// held, not just their middle. A run not repeated is checked on its
	// one value, and the condition says so.
	// +optional
	OnConfidenceBound bool `json:"onConfidenceBound,omitempty"`
}
