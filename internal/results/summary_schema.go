package results

// The schema of summary.json: what a run leaves behind, field by field
// (docs/results.md). Summarize (summary.go) computes it.

import (
	"fmt"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/brokerres"
	"github.com/streambench/streambench-operator/internal/cost"
	"github.com/streambench/streambench-operator/internal/stats"
)

// SchemaVersion identifies the layout of Summary.
const SchemaVersion = "streambench.io/results/v1alpha1"

// bytesPerMB: throughput is in MB/s of 10^6 bytes, as in the source studies (docs/methodology.md) and the
// status printer columns.
const bytesPerMB = 1e6

// Input is everything a run's results are computed from.
type Input struct {
	// Run is the BenchmarkRun's name; the ConfigMap is <Run>-results.
	Run string
	// Namespace of the run (and of the ConfigMap).
	Namespace string
	// Owner, when set, makes the ConfigMap owned by the BenchmarkRun, so it
	// goes with the run (ttlSecondsAfterFinished). Nil in local mode.
	Owner *OwnerRef
	// System under test.
	System v1alpha1.System
	// Driver is OMB's "driver" metadata (e.g. "Kafka-ack2-async"); empty
	// means System.
	Driver string
	// Workload is the (defaulted) workload of the run.
	Workload v1alpha1.WorkloadSpec
	// Durability is the durability in effect.
	Durability *v1alpha1.EffectiveDurability
	// Snapshots are every snapshot of every worker, all phases.
	Snapshots []stats.Snapshot
	// ClockOffsets are the measured clock offsets of the workers.
	ClockOffsets []ClockOffset
	// RateSearch is the max-rate search, when producerRate was 0.
	RateSearch *RateSearch
	// Notes are remarks of the coordinator (e.g. a drain that plateaued).
	Notes []string
	// Testbed is what the run stood on, probed before the load.
	Testbed *v1alpha1.Testbed
	// BrokerResources are the brokers' CPU, disk, network and GC over the
	// measured phase (internal/brokerres); nil when none were read.
	BrokerResources *brokerres.Report
	// Partial marks results of a run that did not finish (a periodic
	// write while it runs, or what a failed run had): Results.Partial.
	Partial bool
	// Delivery is the coordinator's exact delivery accounting, once the
	// run's final drain is over; nil before (partial results).
	Delivery *Delivery
	// Brokers is how the brokers ran: local mode's JVMs, or a managed
	// run's pods (ManagedBrokers); nil when not known.
	Brokers *BrokerSetup
	// Security is the clients' security (protocol, mechanism, negotiated
	// TLS version) as the workers saw it; nil when not recorded.
	Security *v1alpha1.SecurityInfo
	// Collection is how promptly the coordinator merged the workers'
	// intervals; nil when not recorded.
	Collection *Collection
	// Faults are what became of spec.faults in this run (local mode's
	// injector; status.faults' entries); nil for a run without faults.
	Faults []v1alpha1.FaultStatus
	// FailureSettings are the broker settings in effect that bound how
	// long a failure stalls the writes, read from the brokers by the
	// coordinator (internal/driver/inspect); nil when not read.
	FailureSettings []BrokerSetting
}

// BrokerSetting is one broker setting in effect, as the brokers report
// it, that bears on what a failure does to the writes: a fault's stall is
// explained by the one it matches (internal/faultimpact.Explain).
type BrokerSetting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	// Seconds is the value as a length of time, for a timeout; nil for
	// a setting that is not one (unclean.leader.election.enable).
	Seconds *float64 `json:"seconds,omitempty"`
	// Bounds says what the setting bounds, in words.
	Bounds string `json:"bounds"`
}

// BrokerSetup is how the brokers of a run ran: where, the Java runtime,
// the JVM's heap, collector and compiler options, and the broker settings
// streambench set beyond the broker's own defaults. These shape a result
// as much as the hardware: the report and compare state them, and compare
// flags runs whose JVMs or Java major versions differ.
type BrokerSetup struct {
	Where string `json:"where"`
	// Java is the runtime the brokers ran on; nil when not known (an
	// existing cluster, a probe that failed, results written before
	// streambench recorded it).
	Java   *v1alpha1.JavaRuntime `json:"java,omitempty"`
	JVM    []string              `json:"jvm,omitempty"`
	Config map[string]string     `json:"config,omitempty"`
}

// ManagedBrokers is how a managed run's brokers ran, from what the
// operator probed before the load (status.testbed.topology: the broker
// image and its Java); nil when it probed neither (an existing cluster,
// an operator that did not).
func ManagedBrokers(sys v1alpha1.System, tb *v1alpha1.Testbed) *BrokerSetup {
	if tb == nil || tb.Topology == nil || (tb.Topology.Image == "" && tb.Topology.Java == nil) {
		return nil
	}
	t := tb.Topology
	var where string
	switch sys {
	case v1alpha1.SystemPulsar:
		where = fmt.Sprintf("Kubernetes pods of the Pulsar chart: %d brokers, %d bookies", t.Brokers, t.Bookies)
	default:
		where = fmt.Sprintf("Kubernetes pods of Strimzi: %d Kafka brokers", t.Brokers)
	}
	if t.Image != "" {
		where += ", image " + t.Image
	}
	return &BrokerSetup{Where: where, Java: t.Java.DeepCopy()}
}

// Delivery is what the coordinator's accounting (per producer sequence
// numbers, every subscription, unioned over the workers) found: the
// headline's lost, not consumed and duplicated messages.
type Delivery struct {
	// Lost: acknowledged, and never received by a subscription whose
	// final drain ended (caught up or stalled).
	Lost int64
	// NotConsumed: acknowledged, and not yet read by a subscription still
	// receiving when the final drain's deadline ran out.
	NotConsumed int64
	// Duplicates: deliveries beyond the first, also across workers.
	Duplicates int64
	// LostRuns are the sequence numbers Lost counts, per producer ID, as
	// runs (coordinator.Accounting.LostRuns): the series places each loss
	// in the interval its send was in. Nil when nothing was lost.
	LostRuns map[uint32][]stats.SeqRange
}

// OwnerRef names the BenchmarkRun that owns the results ConfigMap.
type OwnerRef struct {
	Name string
	UID  string
}

// ClockOffset is the clock of one worker against the coordinator's.
type ClockOffset struct {
	Worker string `json:"worker"`
	// OffsetMs is worker clock - coordinator clock, in ms; positive means
	// the worker's clock is ahead. End-to-end latency between a producer
	// worker and a consumer worker is off by the difference of their
	// offsets.
	OffsetMs float64 `json:"offsetMs"`
	// UncertaintyMs bounds the measurement (half the round trip).
	UncertaintyMs float64 `json:"uncertaintyMs"`
}

// RateSearch is the outcome of the max-rate search (producerRate: 0).
type RateSearch struct {
	// RateMsgPerSec is the maximum sustainable rate found, in msg/s over all
	// producers: the lower of the bracket's sustainable end and the publish
	// and consume rates (per subscription) achieved while confirming it. The
	// measured phase runs at it.
	RateMsgPerSec float64 `json:"rateMsgPerSec"`
	// Converged is false when the search stopped on its period limit before
	// the bracket was narrow enough (RateMsgPerSec is then the highest rate
	// seen sustainable), or when even the lowest rate fell behind
	// (RateMsgPerSec is then that floor).
	Converged bool `json:"converged"`
	// LowMsgPerSec and HighMsgPerSec are the final bracket: the highest rate
	// held sustainably and the lowest that fell behind (0 if none did).
	LowMsgPerSec  float64 `json:"lowMsgPerSec"`
	HighMsgPerSec float64 `json:"highMsgPerSec"`
	// HoldSeconds is how long the rate found had to hold, judged as one
	// window (spec.workload.rateSearch.holdSeconds or the brokers'
	// write-back window); MaxP99LatencyMs the bound on its corrected p99
	// publish latency (0: none).
	HoldSeconds     float64 `json:"holdSeconds,omitempty"`
	MaxP99LatencyMs float64 `json:"maxP99LatencyMs,omitempty"`
	// Steps are the evaluation periods, in order.
	Steps []RateStep `json:"steps,omitempty"`
	// Holds are the hold windows, in order: the last one held when the
	// search converged.
	Holds []RateHold `json:"holds,omitempty"`
	// Measured says whether the rate found held through the measured
	// phase.
	Measured *RateHeld `json:"measured,omitempty"`
}

// RateHold is one hold window of the rate search: a rate held for
// HoldSeconds after its settling period and judged as a whole.
type RateHold struct {
	TargetMsgPerSec  float64 `json:"targetMsgPerSec"`
	Seconds          float64 `json:"seconds"`
	PublishMsgPerSec float64 `json:"publishMsgPerSec"`
	// ConsumeMsgPerSec is per subscription.
	ConsumeMsgPerSec float64 `json:"consumeMsgPerSec"`
	// PendingGrowth and BacklogGrowth are how much the producers' pending
	// messages and the consumers' backlog (per subscription) grew over
	// the window.
	PendingGrowth int64 `json:"pendingGrowth"`
	BacklogGrowth int64 `json:"backlogGrowth"`
	// CorrectedP99Ms is the window's p99 publish latency corrected for
	// coordinated omission.
	CorrectedP99Ms float64 `json:"correctedP99Ms"`
	// Verdict is "held" or "failed"; Reason says why a window failed.
	Verdict string `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
}

// RateHeld is the measured phase of a max-rate run judged as the search
// judged its holds: did the system keep the rate found throughout?
type RateHeld struct {
	Held             bool    `json:"held"`
	TargetMsgPerSec  float64 `json:"targetMsgPerSec"`
	PublishMsgPerSec float64 `json:"publishMsgPerSec"`
	// ConsumeMsgPerSec is per subscription (0 without consumers).
	ConsumeMsgPerSec float64 `json:"consumeMsgPerSec,omitempty"`
	CorrectedP99Ms   float64 `json:"correctedP99Ms"`
	// Reason says why it did not hold.
	Reason string `json:"reason,omitempty"`
}

// RateStep is one evaluation period of the rate search.
type RateStep struct {
	TargetMsgPerSec  float64 `json:"targetMsgPerSec"`
	PublishMsgPerSec float64 `json:"publishMsgPerSec"`
	ConsumeMsgPerSec float64 `json:"consumeMsgPerSec"`
	// Backlog is messages published but not yet consumed (per
	// subscription) at the end of the period.
	Backlog int64 `json:"backlog"`
	// Pending is messages sent but neither acknowledged nor failed.
	Pending       int64 `json:"pending"`
	PublishErrors int64 `json:"publishErrors"`
	// Verdict is how the search judged the period: "sustainable",
	// "behind", "errors" or "settling" (the first period after a change).
	Verdict string `json:"verdict"`
}

// LatencyDetail is a latency distribution in milliseconds.
type LatencyDetail struct {
	Count int64   `json:"count"`
	Avg   float64 `json:"avg"`
	P50   float64 `json:"p50"`
	P75   float64 `json:"p75"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	P9999 float64 `json:"p9999"`
	Max   float64 `json:"max"`
	// Overflow counts values above 10 minutes (recorded as 10 minutes).
	Overflow int64 `json:"overflow,omitempty"`
	// Negative counts values below 0 (recorded as 0): clock skew.
	Negative int64 `json:"negative,omitempty"`
}

// CurvePoint is one point of a latency quantile curve.
type CurvePoint struct {
	Percentile float64 `json:"percentile"`
	Ms         float64 `json:"ms"`
}

// Curves are the quantile curves of one phase, for charts.
type Curves struct {
	PublishLatencyMs   []CurvePoint `json:"publishLatencyMs,omitempty"`
	CorrectedLatencyMs []CurvePoint `json:"correctedLatencyMs,omitempty"`
	EndToEndLatencyMs  []CurvePoint `json:"endToEndLatencyMs,omitempty"`
}

// PhaseSummary is the aggregate of one phase over all workers.
type PhaseSummary struct {
	Phase     stats.Phase `json:"phase"`
	Seconds   float64     `json:"seconds"`
	Intervals int         `json:"intervals"`
	Workers   int         `json:"workers"`

	Sent          int64 `json:"sent"`
	Acked         int64 `json:"acked"`
	PublishErrors int64 `json:"publishErrors"`
	Received      int64 `json:"received"`
	Duplicates    int64 `json:"duplicates"`

	PublishRateMsgPerSec      float64 `json:"publishRateMsgPerSec"`
	PublishMBPerSec           float64 `json:"publishMBPerSec"`
	PublishErrorRateMsgPerSec float64 `json:"publishErrorRateMsgPerSec"`
	ConsumeRateMsgPerSec      float64 `json:"consumeRateMsgPerSec"`
	ConsumeMBPerSec           float64 `json:"consumeMBPerSec"`
	// CatchUpConsumeMBPerSec is the read rate of the catch-up subscriptions
	// (mixed workload) alone.
	CatchUpConsumeMBPerSec float64 `json:"catchUpConsumeMBPerSec,omitempty"`

	PublishLatencyMs         *LatencyDetail `json:"publishLatencyMs,omitempty"`
	SendDelayMs              *LatencyDetail `json:"sendDelayMs,omitempty"`
	CorrectedLatencyMs       *LatencyDetail `json:"correctedLatencyMs,omitempty"`
	EndToEndLatencyMs        *LatencyDetail `json:"endToEndLatencyMs,omitempty"`
	CatchUpEndToEndLatencyMs *LatencyDetail `json:"catchUpEndToEndLatencyMs,omitempty"`

	// Curves are kept for the measure and drain phases only.
	Curves *Curves `json:"curves,omitempty"`
}

// SeriesPoint is one point of the time series: one interval (or Stride
// merged intervals) over all workers.
type SeriesPoint struct {
	Phase stats.Phase `json:"phase"`
	Index int         `json:"index"`
	// OffsetSeconds is the point's start after the run's first snapshot.
	OffsetSeconds float64 `json:"offsetSeconds"`
	Seconds       float64 `json:"seconds"`

	PublishRateMsgPerSec      float64 `json:"publishRateMsgPerSec"`
	PublishMBPerSec           float64 `json:"publishMBPerSec"`
	PublishErrorRateMsgPerSec float64 `json:"publishErrorRateMsgPerSec"`
	ConsumeRateMsgPerSec      float64 `json:"consumeRateMsgPerSec"`
	ConsumeMBPerSec           float64 `json:"consumeMBPerSec"`
	// Backlog is acked x subscriptions per topic - received (duplicates
	// excluded), at the point's end, in messages.
	Backlog int64 `json:"backlog"`

	PublishLatencyMs   *LatencyDetail `json:"publishLatencyMs,omitempty"`
	SendDelayMs        *LatencyDetail `json:"sendDelayMs,omitempty"`
	CorrectedLatencyMs *LatencyDetail `json:"correctedLatencyMs,omitempty"`
	EndToEndLatencyMs  *LatencyDetail `json:"endToEndLatencyMs,omitempty"`

	// Lost is the acknowledged messages sent in this interval that a
	// subscription never received (each subscription's loss counted, as
	// in results.lost), placed by the producers' sequence numbers at the
	// interval's ends; nil when the run's delivery record is not in (a
	// run still going) or its workers did not say where their sequence
	// numbers stood. A loss is a send's, so it lies in the interval it
	// was sent in, not the one a fault took it in.
	Lost *int64 `json:"lost,omitempty"`
	// Duplicates is the deliveries beyond the first that a worker
	// received in this interval (those found only across workers, at
	// the end, are in results.duplicates alone).
	Duplicates int64 `json:"duplicates,omitempty"`
}

// Series is the time series of the whole run, every phase in order.
type Series struct {
	// Stride is how many worker intervals each point merges (1 unless the
	// series was thinned to fit the ConfigMap; see Truncation).
	Stride int           `json:"stride"`
	Points []SeriesPoint `json:"points"`
}

// SubscriptionCount is what one subscription received over the run.
type SubscriptionCount struct {
	Name          string `json:"name"`
	CatchUp       bool   `json:"catchUp,omitempty"`
	Received      int64  `json:"received"`
	ReceivedBytes int64  `json:"receivedBytes"`
	Duplicates    int64  `json:"duplicates,omitempty"`
	Lost          int64  `json:"lost,omitempty"`
}

// Subscriptions summarises per-subscription counts. With many
// subscriptions (e.g. 10,000 topics with one subscription each) only
// MaxListedSubscriptions are listed: those with duplicates or losses first,
// then the lowest and highest receivers.
type Subscriptions struct {
	Count       int                 `json:"count"`
	MinReceived int64               `json:"minReceived"`
	MaxReceived int64               `json:"maxReceived"`
	Items       []SubscriptionCount `json:"items"`
}

// MaxListedSubscriptions bounds Subscriptions.Items.
const MaxListedSubscriptions = 100

// Truncation says what was thinned to keep the ConfigMap under 1 MiB.
type Truncation struct {
	// SeriesStride: each series point (and OMB list entry) merges this many
	// intervals; merging is exact, only the time resolution drops.
	SeriesStride int `json:"seriesStride"`
	// IntervalHistogramStride: the same for intervals.hlog.gz; 0 means the
	// interval histograms were left out.
	IntervalHistogramStride int `json:"intervalHistogramStride"`
	// SubscriptionsListed of Subscriptions.Count are listed.
	SubscriptionsListed int `json:"subscriptionsListed"`
}

// Collection says how promptly the coordinator had every worker's snapshot
// of each interval, merged: the live progress, /metrics and the results
// written while the run goes on trail the workers by this much. With many
// workers a slow collection would show here first.
type Collection struct {
	IntervalSeconds float64 `json:"intervalSeconds"`
	Workers         int     `json:"workers"`
	// Merged is how many intervals every worker delivered.
	Merged int `json:"merged"`
	// MaxMergeLagSeconds is the longest time from an interval's end (when
	// its last worker closed it) until the coordinator held every
	// worker's snapshot of it; MeanMergeLagSeconds the mean over Merged.
	MaxMergeLagSeconds  float64 `json:"maxMergeLagSeconds"`
	MeanMergeLagSeconds float64 `json:"meanMergeLagSeconds"`
	// Late is how many intervals were merged more than one interval after
	// their end.
	Late int `json:"late,omitempty"`
	// Incomplete is how many intervals some worker delivered and another
	// never did (given up once a later interval was merged).
	Incomplete int `json:"incomplete,omitempty"`
}

// Summary is the summary JSON (summary.json in the results ConfigMap).
type Summary struct {
	SchemaVersion string                        `json:"schemaVersion"`
	Run           string                        `json:"run"`
	System        v1alpha1.System               `json:"system"`
	Workload      v1alpha1.WorkloadSpec         `json:"workload"`
	Durability    *v1alpha1.EffectiveDurability `json:"durability,omitempty"`
	Start         time.Time                     `json:"start"`
	End           time.Time                     `json:"end"`
	Workers       []string                      `json:"workers"`

	// Results is the headline, exactly the run's status.results.
	Results v1alpha1.ResultsSummary `json:"results"`
	// Duplicates is deliveries of an already received message (all
	// subscriptions, whole run).
	Duplicates int64 `json:"duplicates"`

	Phases        []PhaseSummary `json:"phases"`
	Series        Series         `json:"series"`
	Subscriptions Subscriptions  `json:"subscriptions"`
	ClockOffsets  []ClockOffset  `json:"clockOffsets,omitempty"`
	RateSearch    *RateSearch    `json:"rateSearch,omitempty"`
	Truncation    *Truncation    `json:"truncation,omitempty"`
	Notes         []string       `json:"notes,omitempty"`
	// Testbed is the nodes and disks under the brokers, probed before the
	// load, and the topology (status.testbed).
	Testbed *v1alpha1.Testbed `json:"testbed,omitempty"`
	// BrokerResources are the brokers' resources over the measured phase,
	// per broker and in total (the total is also results.brokerResources).
	BrokerResources *brokerres.Report `json:"brokerResources,omitempty"`
	// Cost is what the measured throughput costs (internal/cost), filled
	// by the outcome step both modes share.
	Cost *cost.Report `json:"cost,omitempty"`
	// Brokers is how the brokers ran (Input.Brokers).
	Brokers *BrokerSetup `json:"brokers,omitempty"`
	// Security is how the clients reached the brokers (Input.Security).
	// OMB's result JSON has no place for it; it is only here.
	Security *v1alpha1.SecurityInfo `json:"security,omitempty"`
	// Collection is how promptly the coordinator merged the workers'
	// intervals (Input.Collection).
	Collection *Collection `json:"collection,omitempty"`
	// Faults are what became of spec.faults (Input.Faults), in the shape
	// of status.faults.
	Faults []v1alpha1.FaultStatus `json:"faults,omitempty"`
	// FailureSettings are the broker settings that bound a failure's
	// stall, as read from the brokers (Input.FailureSettings).
	FailureSettings []BrokerSetting `json:"failureSettings,omitempty"`

	// Repeats are the repeats of a repeated run (Aggregate), in the order
	// run; Results is then the median over them, and Intervals each
	// figure's median in its interval. Empty for a run that was not
	// repeated.
	Repeats   []Repeat         `json:"repeats,omitempty"`
	Intervals []FigureInterval `json:"intervals,omitempty"`
	// CurveIntervals are a repeated run's quantile curves of the measured
	// phase: at each percentile of the curves, the median over the repeats
	// in its interval, as Intervals has for the headline (the report draws
	// them as the curve and its band).
	CurveIntervals *CurveIntervals `json:"curveIntervals,omitempty"`
}
