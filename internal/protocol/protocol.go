// Package protocol is the HTTP API between the coordinator and the workers,
// shaped after OMB's worker API (initialize, create topics, consumers and
// producers, probe, start load, adjust the rate, pause and resume consumers,
// stats, stop) with what OMB lacked: a time endpoint for clock offsets,
// stats read by sequence number (so a retried read loses nothing, OMB #369)
// and the received sequence sets for exact loss accounting.
//
// Every request and response body is JSON. A failed call answers with a
// non-2xx status and an Error body.
package protocol

import (
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/stats"
)

// TokenEnv is the environment variable that carries the run's token (a
// Secret the controller makes) into the worker and coordinator pods: the
// workers take commands only with it, as "Authorization: Bearer <token>".
const TokenEnv = "STREAMBENCH_RUN_TOKEN"

// TerminationLogEnv names the file (a pod's terminationMessagePath) where
// a load pod's command writes the error it ends with: the container's
// termination message, and so a failed run's status.message, is then that
// error, not the last 2 KiB of the log, which start mid-line and may end
// before the error when a reader cuts them short.
const TerminationLogEnv = "STREAMBENCH_TERMINATION_LOG"

// Paths of the worker API. All are POST except Stats, Counters, Received,
// Time and Health (GET).
const (
	PathInitialize      = "/v1/initialize"
	PathCreateTopics    = "/v1/create-topics"
	PathCreateConsumers = "/v1/create-consumers"
	PathCreateProducers = "/v1/create-producers"
	PathClockOffsets    = "/v1/clock-offsets"
	PathProbe           = "/v1/probe"
	PathStartLoad       = "/v1/start-load"
	PathAdjustRate      = "/v1/adjust-rate"
	PathPhase           = "/v1/phase"
	PathPauseConsumers  = "/v1/pause-consumers"
	PathResumeConsumers = "/v1/resume-consumers"
	PathStopLoad        = "/v1/stop-load"
	PathStats           = "/v1/stats"
	PathCounters        = "/v1/counters"
	PathReceived        = "/v1/received"
	PathStop            = "/v1/stop"
	PathDeleteTopics    = "/v1/delete-topics"
	// PathShutdown asks the worker process to exit once the coordinator is
	// done with it, so a worker Job completes instead of idling.
	PathShutdown = "/v1/shutdown"
	PathTime     = "/v1/time"
	PathHealth   = "/healthz"
)

// Error is the body of a failed call.
type Error struct {
	Error string `json:"error"`
}

// Empty is the body of calls that carry nothing.
type Empty struct{}

// InitializeRequest makes a worker ready for one run: it creates the driver
// and the payloads. A second Initialize discards the previous run's state.
type InitializeRequest struct {
	// WorkerIndex is this worker's position in the coordinator's list.
	WorkerIndex int `json:"workerIndex"`
	// Driver is the system under test, its durability and overrides.
	Driver driver.Config `json:"driver"`
	// Workload is the OMB workload (defaults applied by the coordinator).
	Workload v1alpha1.WorkloadSpec `json:"workload"`
	// PayloadData is the payload file's content when the workload names
	// one: the coordinator reads the file so the workers need not have it.
	PayloadData []byte `json:"payloadData,omitempty"`
	// SnapshotIntervalMillis is how often the worker cuts a stats snapshot
	// (10 s as OMB unless a test shortens it).
	SnapshotIntervalMillis int64 `json:"snapshotIntervalMillis"`
}

// CreateTopicsTimeout bounds a topic creation: the coordinator's call and
// the worker's work, which goes on to its end when the call is abandoned.
const CreateTopicsTimeout = 2 * time.Minute

// InitializeResponse says how the worker's driver reached the brokers.
type InitializeResponse struct {
	// Security is the protocol, mechanism and negotiated TLS version of
	// the worker's clients (no secret values); nil when the driver does
	// not say.
	Security *v1alpha1.SecurityInfo `json:"security,omitempty"`
}

// CreateTopicsRequest is sent to the leader worker only.
type CreateTopicsRequest struct {
	Topics             int   `json:"topics"`
	PartitionsPerTopic int32 `json:"partitionsPerTopic"`
}

// CreateTopicsResponse are the full topic names, index i = topic i.
type CreateTopicsResponse struct {
	Topics []string `json:"topics"`
}

// ConsumerAssignment is one consumer of one subscription.
type ConsumerAssignment struct {
	Topic        string `json:"topic"`
	Subscription string `json:"subscription"`
	// CatchUp marks the mixed workload's catch-up subscriptions: the only
	// ones paused while the backlog builds.
	CatchUp bool `json:"catchUp,omitempty"`
}

// CreateConsumersRequest lists the consumers this worker runs.
type CreateConsumersRequest struct {
	Consumers []ConsumerAssignment `json:"consumers"`
}

// ProducerAssignment is one producer; ID is unique in the run and goes
// into every payload header.
type ProducerAssignment struct {
	Topic string `json:"topic"`
	ID    uint32 `json:"id"`
}

// CreateProducersRequest lists the producers this worker runs.
type CreateProducersRequest struct {
	Producers []ProducerAssignment `json:"producers"`
}

// ClockOffsetsRequest gives a consumer worker the clock offsets (worker
// clock minus coordinator clock, µs) of itself and of every producer's
// worker, so end-to-end latency is corrected for clock skew (OMB #216).
type ClockOffsetsRequest struct {
	SelfMicros int64 `json:"selfMicros"`
	// ProducerMicros maps a producer id to its worker's offset.
	ProducerMicros map[uint32]int64 `json:"producerMicros"`
}

// ProbeResponse says how many probe messages were acknowledged.
type ProbeResponse struct {
	Acked int `json:"acked"`
}

// StartLoadRequest starts publishing at a synchronized instant.
type StartLoadRequest struct {
	// StartAtMicros is the coordinator's clock (µs, Unix) translated into
	// the worker's clock by the coordinator.
	StartAtMicros int64 `json:"startAtMicros"`
	// RatePerSec is this worker's share of the producer rate, split evenly
	// over its producers.
	RatePerSec float64 `json:"ratePerSec"`
	// Phase labels the first snapshots (e.g. warmup).
	Phase string `json:"phase"`
}

// AdjustRateRequest changes this worker's rate at run time.
type AdjustRateRequest struct {
	RatePerSec float64 `json:"ratePerSec"`
}

// PhaseRequest cuts a snapshot and labels what follows with Phase, so a
// warm-up or a drain is never mixed into the measured phase.
type PhaseRequest struct {
	Phase string `json:"phase"`
}

// PhaseResponse is the sequence number of the snapshot cut at the change
// (0 if nothing was recorded since the previous one).
type PhaseResponse struct {
	Seq uint64 `json:"seq"`
}

// PauseRequest pauses (or resumes) consumers.
type PauseRequest struct {
	// CatchUpOnly touches only the catch-up subscriptions (mixed
	// workload); otherwise every consumer.
	CatchUpOnly bool `json:"catchUpOnly,omitempty"`
}

// StatsResponse holds the snapshots with a sequence number above the
// request's `after` query parameter; reading does not remove them, so a
// retry after a lost response gets the same snapshots again.
type StatsResponse struct {
	Snapshots []stats.Snapshot `json:"snapshots"`
}

// ProducerCounters are one producer's counts since the load started.
type ProducerCounters struct {
	ID     uint32 `json:"id"`
	Topic  string `json:"topic"`
	Sent   int64  `json:"sent"`
	Acked  int64  `json:"acked"`
	Failed int64  `json:"failed"`
}

// SubscriptionCounters are one subscription's counts on this worker.
type SubscriptionCounters struct {
	Topic        string `json:"topic"`
	Subscription string `json:"subscription"`
	CatchUp      bool   `json:"catchUp,omitempty"`
	// Received counts every measured message delivered, duplicates
	// included; Unique leaves duplicates out.
	Received   int64 `json:"received"`
	Unique     int64 `json:"unique"`
	Bytes      int64 `json:"bytes"`
	Duplicates int64 `json:"duplicates"`
	// Probes is how many probe messages arrived (the coordinator waits
	// until every subscription has one).
	Probes int64 `json:"probes"`
	// Foreign counts messages without our header (not from this run).
	Foreign int64 `json:"foreign,omitempty"`
}

// CountersResponse are live counters, cheap to poll (backlog building,
// drain, rate search).
type CountersResponse struct {
	Producers     []ProducerCounters     `json:"producers"`
	Subscriptions []SubscriptionCounters `json:"subscriptions"`
	// FirstError is the first send or client error seen, if any.
	FirstError string `json:"firstError,omitempty"`
}

// ProducerSeqs is the received set of one producer's sequence numbers.
type ProducerSeqs struct {
	ProducerID uint32 `json:"producerId"`
	// Set is a worker.SeqSet in its binary form.
	Set []byte `json:"set"`
}

// SubscriptionSeqs is what one subscription received on this worker.
type SubscriptionSeqs struct {
	Topic        string         `json:"topic"`
	Subscription string         `json:"subscription"`
	Producers    []ProducerSeqs `json:"producers"`
}

// ProducerFinal is what a stopped producer sent: sequence numbers 0..Sent-1
// except those in FailedSet were acknowledged.
type ProducerFinal struct {
	ID    uint32 `json:"id"`
	Topic string `json:"topic"`
	Sent  uint64 `json:"sent"`
	// Failed is how many sends failed; FailedSet is their sequence numbers
	// (a worker.SeqSet, in its binary form).
	Failed    int64  `json:"failed,omitempty"`
	FailedSet []byte `json:"failedSet,omitempty"`
	// Unanswered is how many sends had neither an ack nor a failure when
	// the load stopped and the producers were flushed and closed (a
	// client with no send timeout holds a send the brokers cannot
	// write); UnansweredSet is their sequence numbers. Nothing was
	// promised for them: they are neither acknowledged nor lost.
	Unanswered    int64  `json:"unanswered,omitempty"`
	UnansweredSet []byte `json:"unansweredSet,omitempty"`
}

// ReceivedResponse is the final accounting material of a worker, read after
// the load stopped: the coordinator unions the sets of a subscription over
// workers and compares them with what was acknowledged.
type ReceivedResponse struct {
	Producers     []ProducerFinal    `json:"producers"`
	Subscriptions []SubscriptionSeqs `json:"subscriptions"`
}

// TimeResponse is the worker's wall clock, µs since the Unix epoch.
type TimeResponse struct {
	UnixMicros int64 `json:"unixMicros"`
}
