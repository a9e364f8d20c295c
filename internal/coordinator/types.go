package coordinator

import (
	"context"
	"log"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	kafkadriver "github.com/streambench/streambench-operator/internal/driver/kafka"
	"github.com/streambench/streambench-operator/internal/protocol"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
	"github.com/streambench/streambench-operator/internal/workload"
)

// Options configure one run.
type Options struct {
	// Workers are the base URLs of the workers (http://host:port).
	Workers []string
	// Driver is the system under test; Driver.RunID names the run.
	Driver driver.Config
	// Workload is the OMB workload; defaults are applied here.
	Workload v1alpha1.WorkloadSpec
	// PayloadData is the payload file's content (read by the caller), sent
	// to the workers so they need not have the file.
	PayloadData []byte

	// SnapshotInterval is the length of a stats interval (default 10 s).
	SnapshotInterval time.Duration
	// CallTimeout bounds each HTTP call (default 30 s); Retries is the
	// number of retries of idempotent calls (default 3).
	CallTimeout time.Duration
	Retries     int
	// DeleteRetry is how long the cleanup tries again to delete the
	// topics while it fails (default 45 s; CleanupTimeout bounds it too).
	DeleteRetry time.Duration
	// ProbeTimeout bounds the wait until every subscription received a
	// probe message (default 2 min).
	ProbeTimeout time.Duration
	// ClockSamples is the number of round trips per clock offset (default 8).
	ClockSamples int
	// SameClock says the workers read the coordinator's own clock (local
	// mode: one process), so their offset is 0 by construction; measuring
	// it over loopback HTTP would only apply the round trips' noise to
	// every end-to-end latency.
	SameClock bool
	// BacklogBuildTimeout bounds building the backlog (default: twice the
	// time the producer rate needs, plus 2 min).
	BacklogBuildTimeout time.Duration
	// DrainTimeout bounds the drain (default workload.DrainTimeout); DrainPlateau fails it
	// when the backlog stopped shrinking for this long (default 60 s).
	DrainTimeout time.Duration
	DrainPlateau time.Duration
	// CatchUpTimeout bounds the wait, after the load stopped, for
	// consumers that are still receiving: what they have not read then is
	// reported not consumed, not lost. A timeout is not an error. Zero
	// derives it from the run (drainBound): twice the time the backlog at
	// the stop takes at the rate the subscriptions read in the measured
	// phase, at least MinCatchUpTimeout, within the run's deadline.
	CatchUpTimeout time.Duration
	// CatchUpStall: a subscription that received nothing new for this
	// long, with acknowledged messages missing, has stopped; what it
	// misses is lost (default catchUpStall of the driver's settings).
	CatchUpStall time.Duration
	// RateSearch tunes the max-rate search (producerRate 0).
	RateSearch RateSearchOptions
	// MaxMessages > 0 bounds the measured phase by a record count, as
	// kafka-producer-perf-test's --num-records does: it ends once the
	// producers had that many messages acknowledged in it, or at the end of
	// the workload's duration, whichever comes first (the notes say which).
	MaxMessages int64
	// ShutdownWorkers asks every worker process to exit at the end (worker
	// pods of a Job, which would otherwise idle until deleted).
	ShutdownWorkers bool
	// ReadDurability says the brokers are an existing cluster that
	// streambench did not configure: once the topics exist, their and the
	// brokers' durability settings are read (internal/driver/inspect)
	// and Result.Durability reports the level really in effect.
	ReadDurability bool
	// ReadFailureSettings asks for the brokers' settings that bound a
	// failure's stall (internal/driver/inspect.Failure), read once the
	// topics exist, for a run with faults: Result.FailureSettings, which
	// explain each fault's stall (internal/faultimpact.Explain).
	ReadFailureSettings bool
	// Token is the run's token, sent with every call: the workers of a
	// cluster run take commands only with it (internal/worker).
	Token string
	// Logf logs progress (default log.Printf).
	Logf func(format string, args ...any)
	// Progress, if set, is called from the stats collector once per
	// snapshot interval that every worker has reported (local mode's live
	// display). It must not block for long.
	Progress func(Progress)
	// Checkpoint, if set, receives the results so far once per snapshot
	// interval (every snapshot read yet, with the clock offsets), so a run
	// that is killed midway keeps what it measured: the cluster's
	// coordinator writes them into the results ConfigMap, marked partial.
	// It is called from the stats collector and must not block for long.
	Checkpoint func(*Result)
	// PageCache, if set (spec.testbed.dropPageCache), drops the broker
	// nodes' page cache after a backlog is built and before it is drained;
	// its error fails the run.
	PageCache PageCacheDropper
	// OnSnapshot, if set, is called once for every worker snapshot the
	// coordinator collects, in order (the coordinator's /metrics,
	// internal/metrics). It must not block.
	OnSnapshot func(stats.Snapshot)
	// OnMeasure, if set, is called once when the measured phase starts
	// (after the warm-up, a rate search and a backlog's build and drain),
	// with its start: local mode times spec.faults from it. It must not
	// block.
	OnMeasure func(start time.Time)
}

// PageCacheDropper drops the broker nodes' page cache while the run waits:
// in a cluster the operator's drop Jobs, asked through the results
// ConfigMap (pagecache.Requester); in local mode the host's own. The
// record says what happened, also with an error.
type PageCacheDropper interface {
	DropPageCache(ctx context.Context, reason string) (v1alpha1.PageCacheDrop, error)
}

// BacklogResult is what the backlog phases measured.
type BacklogResult struct {
	TargetBytes int64 `json:"targetBytes"`
	// BuiltBytes is the backlog when the drain started.
	BuiltBytes   int64   `json:"builtBytes"`
	BuildSeconds float64 `json:"buildSeconds"`
	// RemainingBytes is the backlog when the drain ended.
	RemainingBytes int64   `json:"remainingBytes"`
	DrainSeconds   float64 `json:"drainSeconds"`
	// DrainedBytes is what the drained subscriptions read during the drain.
	DrainedBytes  int64   `json:"drainedBytes"`
	DrainMBPerSec float64 `json:"drainMBPerSec"`
	// PageCacheDropSeconds is how long the page-cache drop between the
	// build and the drain took (spec.testbed.dropPageCache); BuildSeconds
	// does not include it.
	PageCacheDropSeconds float64 `json:"pageCacheDropSeconds,omitempty"`
}

// Result is everything a run measured, the input of the results package.
type Result struct {
	RunID    string                `json:"runId"`
	System   v1alpha1.System       `json:"system"`
	Workload v1alpha1.WorkloadSpec `json:"workload"`
	Plan     Plan                  `json:"-"`
	Workers  []string              `json:"workers"`
	// Snapshots are every worker's interval snapshots of every phase.
	Snapshots []stats.Snapshot `json:"snapshots"`
	// ClockOffsets are per worker (index as Workers).
	ClockOffsets []protocol.ClockOffset `json:"clockOffsets"`
	Accounting   Accounting             `json:"accounting"`
	// Security is how the workers' clients reached the brokers
	// (protocol, mechanism, TLS version); nil when not said.
	Security *v1alpha1.SecurityInfo `json:"security,omitempty"`
	// Accounted says the accounting was done: the run reached the end of
	// its final drain (false in a checkpoint or a failed run's result).
	Accounted bool `json:"accounted,omitempty"`
	// MeasuredRate is the total producer rate of the measured phase (the
	// workload's, or what the rate search found).
	MeasuredRate float64 `json:"measuredRate"`
	// MeasureStart is when the measured phase started (what OnMeasure
	// was told): faults count from it, in both modes.
	MeasureStart time.Time           `json:"measureStart,omitempty"`
	RateSearch   *results.RateSearch `json:"rateSearch,omitempty"`
	Backlog      *BacklogResult      `json:"backlog,omitempty"`
	// Durability is what an existing cluster was found to give
	// (Options.ReadDurability); nil when it was not read.
	Durability *v1alpha1.EffectiveDurability `json:"durability,omitempty"`
	// FailureSettings are the brokers' settings that bound a failure's
	// stall (Options.ReadFailureSettings); nil when not read.
	FailureSettings []results.BrokerSetting `json:"failureSettings,omitempty"`
	// PageCacheDrops are the page-cache drops the run asked for mid-run
	// (Options.PageCache), failed ones included.
	PageCacheDrops []v1alpha1.PageCacheDrop `json:"pageCacheDrops,omitempty"`
	// Collection is how promptly the workers' intervals were merged.
	Collection *results.Collection `json:"collection,omitempty"`
	// Notes are remarks for the results (e.g. subscriptions that never
	// caught up).
	Notes []string  `json:"notes,omitempty"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// PhaseCooldown labels what follows the measured phase (the load stops and
// consumers catch up); it never feeds the headline numbers.
const PhaseCooldown stats.Phase = "cooldown"

func (o *Options) defaults() {
	if o.SnapshotInterval <= 0 {
		o.SnapshotInterval = 10 * time.Second
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 30 * time.Second
	}
	if o.Retries <= 0 {
		o.Retries = 3
	}
	if o.DeleteRetry <= 0 {
		o.DeleteRetry = 45 * time.Second
	}
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = 2 * time.Minute
	}
	if o.ClockSamples <= 0 {
		o.ClockSamples = 8
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = workload.DrainTimeout(o.Workload)
	}
	if o.DrainPlateau <= 0 {
		o.DrainPlateau = 60 * time.Second
	}
	if o.CatchUpStall <= 0 {
		o.CatchUpStall = catchUpStall(o.Driver)
	}
	if o.Logf == nil {
		o.Logf = log.Printf
	}
}

// MinCatchUpTimeout is the shortest derived final drain: a backlog that
// the measured rate reads in seconds still gets two minutes, past any
// rebalance or reconnect.
const MinCatchUpTimeout = 2 * time.Minute

// drainReserve is what the run keeps of its deadline after the final
// drain: the final read, the accounting and the cleanup.
const drainReserve = 3 * time.Minute

// drainBound is how long the final drain waits for subscriptions still
// receiving: twice the time backlog messages (the largest left to any
// subscription at the stop) take at rate (msg/s a subscription read in the
// measured phase), at least MinCatchUpTimeout, and at most what the run's
// deadline leaves (remaining, 0 for none) after drainReserve.
func drainBound(backlog int64, rate float64, remaining time.Duration) time.Duration {
	d := MinCatchUpTimeout
	if backlog > 0 && rate > 0 {
		need := time.Duration(2 * float64(backlog) / rate * float64(time.Second))
		d = max(d, need)
	}
	if remaining > 0 {
		d = min(d, max(remaining-drainReserve, 0))
	}
	return d
}

// catchUpStall is how long a subscription of this run may receive
// nothing before what it misses is lost: DefaultCatchUpStall, or, for Kafka
// consumers whose session.timeout.ms the run raised, that timeout plus
// catchUpRebalance, as long as a group may wait for a gone member and
// rebalance.
func catchUpStall(d driver.Config) time.Duration {
	stall := DefaultCatchUpStall
	if d.System == v1alpha1.SystemKafka && d.Overrides != nil && d.Overrides.Kafka != nil {
		stall = max(stall, kafkadriver.ConsumerSessionTimeout(d.Overrides.Kafka.Consumer)+catchUpRebalance)
	}
	return stall
}

// catchUpRebalance is what a consumer group's rebalance takes after its
// session timeout, at most (a join and a sync round over the brokers).
const catchUpRebalance = 15 * time.Second

// DefaultCatchUpStall is how long a subscription may receive nothing new
// after the load stopped before what it misses counts as lost: a minute,
// as long as the Pulsar client's longest reconnect back-off (60 s) and
// well past a Kafka consumer group's session timeout (45 s) and a KRaft
// broker's (9 s) with the leader election after it, so a consumer that
// is only waiting out a failover is not reported as losing messages.
const DefaultCatchUpStall = time.Minute
