// Package coordinator drives N workers over HTTP through one benchmark run,
// as OMB's driver does (create topics, consumers and producers; probe;
// synchronized start; warm-up; measured phase with periodic snapshots;
// stop), with what OMB lacked: a bounded probe that names what never
// arrived (OMB #275), clock offsets for end-to-end latency (#216), a
// backlog drain that ends with an error when it plateaus (#334), the mixed
// workload, a produce-only run that uses every worker (#405), exact loss
// accounting, and topics deleted at the end.
package coordinator

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/durability/inspect"
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
	// ProbeTimeout bounds the wait until every subscription received a
	// probe message (default 2 min).
	ProbeTimeout time.Duration
	// ClockSamples is the number of round trips per clock offset (default 8).
	ClockSamples int
	// BacklogBuildTimeout bounds building the backlog (default: twice the
	// time the producer rate needs, plus 2 min).
	BacklogBuildTimeout time.Duration
	// DrainTimeout bounds the drain (default workload.DrainTimeout); DrainPlateau fails it
	// when the backlog stopped shrinking for this long (default 60 s).
	DrainTimeout time.Duration
	DrainPlateau time.Duration
	// CatchUpTimeout bounds the wait, after the load stopped, until the
	// consumers received every acknowledged message (default 2 min); a
	// timeout is not an error, the accounting reports what is missing.
	CatchUpTimeout time.Duration
	// RateSearch tunes the max-rate search (producerRate 0).
	RateSearch RateSearchOptions
	// ShutdownWorkers asks every worker process to exit at the end (worker
	// pods of a Job, which would otherwise idle until deleted).
	ShutdownWorkers bool
	// ReadDurability says the brokers are an existing cluster that
	// streambench did not configure: once the topics exist, their and the
	// brokers' durability settings are read (internal/durability/inspect)
	// and Result.Durability reports the level really in effect.
	ReadDurability bool
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
	// MeasuredRate is the total producer rate of the measured phase (the
	// workload's, or what the rate search found).
	MeasuredRate float64             `json:"measuredRate"`
	RateSearch   *results.RateSearch `json:"rateSearch,omitempty"`
	Backlog      *BacklogResult      `json:"backlog,omitempty"`
	// Durability is what an existing cluster was found to give
	// (Options.ReadDurability); nil when it was not read.
	Durability *v1alpha1.EffectiveDurability `json:"durability,omitempty"`
	// PageCacheDrops are the page-cache drops the run asked for mid-run
	// (Options.PageCache), failed ones included.
	PageCacheDrops []v1alpha1.PageCacheDrop `json:"pageCacheDrops,omitempty"`
	// Notes are remarks for the results (e.g. subscriptions that never
	// caught up).
	Notes []string  `json:"notes,omitempty"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// PhaseCooldown labels what follows the measured phase (the load stops and
// consumers catch up); it never feeds the headline numbers.
const PhaseCooldown stats.Phase = "cooldown"

type coordinator struct {
	o       Options
	wl      v1alpha1.WorkloadSpec
	clients []*client
	plan    Plan
	res     *Result

	collMu   sync.Mutex
	lastSeq  []uint64
	snaps    []stats.Snapshot
	progress *progressTracker
}

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
	if o.CatchUpTimeout <= 0 {
		o.CatchUpTimeout = 2 * time.Minute
	}
	if o.Logf == nil {
		o.Logf = log.Printf
	}
}

// Run drives one benchmark run to its end. Whatever happens, it stops the
// workers and deletes the topics before it returns; the Result holds what
// was measured so far even when err is not nil.
func Run(ctx context.Context, o Options) (res *Result, err error) {
	o.defaults()
	if len(o.Workers) == 0 {
		return nil, errors.New("no workers: give at least one worker URL (--workers) or a worker service (--workers-service)")
	}
	if o.Driver.RunID == "" {
		return nil, errors.New("driver RunID is empty: every run needs a name for its topics and subscriptions")
	}
	wl := o.Workload
	workload.Default(&wl)
	c := &coordinator{o: o, wl: wl, lastSeq: make([]uint64, len(o.Workers)), progress: newProgressTracker(len(o.Workers))}
	for _, u := range o.Workers {
		c.clients = append(c.clients, newClient(u, o.CallTimeout, o.Retries, o.Token))
	}
	c.res = &Result{RunID: o.Driver.RunID, System: o.Driver.System, Workload: wl, Workers: o.Workers, Start: time.Now()}
	topicsCreated := false
	defer func() {
		c.res.End = time.Now()
		cerr := c.cleanup(topicsCreated, err != nil)
		c.res.Snapshots = c.snaps
		err = errors.Join(err, cerr)
		res = c.res
	}()
	if err := c.initialize(ctx); err != nil {
		return nil, err
	}
	var topics protocol.CreateTopicsResponse
	if err := c.clients[0].post(ctx, protocol.PathCreateTopics, protocol.CreateTopicsRequest{
		Topics: int(wl.Topics), PartitionsPerTopic: wl.PartitionsPerTopic,
	}, &topics, callOpt{timeout: 2 * time.Minute}); err != nil {
		return nil, fmt.Errorf("creating topics: %w", err)
	}
	topicsCreated = true
	if o.ReadDurability {
		c.readDurability(ctx, topics.Topics)
	}
	plan, err := NewPlan(len(o.Workers), o.Driver.RunID, topics.Topics, wl)
	if err != nil {
		return nil, err
	}
	c.plan, c.res.Plan = plan, plan
	o.Logf("run %s: %d topics, %d producer workers, %d consumer workers, %d subscriptions",
		o.Driver.RunID, len(topics.Topics), len(plan.ProducerWorkers), len(plan.ConsumerWorkers), len(plan.Subscriptions))
	if err := c.createClients(ctx); err != nil {
		return nil, err
	}
	if err := c.clockOffsets(ctx); err != nil {
		return nil, err
	}
	if err := c.probe(ctx); err != nil {
		return nil, err
	}
	return nil, c.runLoad(ctx)
}

func (c *coordinator) logf(format string, args ...any) { c.o.Logf(format, args...) }

// readDurability reads the existing cluster's durability settings. A
// cluster that cannot be read does not stop the run: the results then say
// the level is as requested, not verified, and why it was not read.
func (c *coordinator) readDurability(ctx context.Context, topics []string) {
	asked := c.o.Driver.Durability
	eff, err := inspect.Existing(ctx, c.o.Driver.System, c.o.Driver.Brokers, asked, topics)
	if err != nil {
		eff = asked
		eff.Verification = v1alpha1.NotVerified
		eff.Explanation = fmt.Sprintf("The existing cluster's durability settings could not be read (%v); the level is as requested, not verified.", err)
		c.res.Notes = append(c.res.Notes, "durability: "+eff.Explanation)
	}
	c.logf("durability of the existing cluster: level %d in effect (%d requested): %s", eff.AchievedLevel, eff.RequestedLevel, eff.Explanation)
	c.res.Durability = &eff
}

// each calls f for every worker index in idx in parallel and joins the
// errors.
func each(idx []int, f func(i int) error) error {
	errs := make([]error, len(idx))
	var wg sync.WaitGroup
	for k, i := range idx {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k] = f(i)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (c *coordinator) all() []int {
	out := make([]int, len(c.clients))
	for i := range out {
		out[i] = i
	}
	return out
}

func (c *coordinator) initialize(ctx context.Context) error {
	return each(c.all(), func(i int) error {
		return c.clients[i].post(ctx, protocol.PathInitialize, protocol.InitializeRequest{
			WorkerIndex: i, Driver: c.o.Driver, Workload: c.wl, PayloadData: c.o.PayloadData,
			SnapshotIntervalMillis: c.o.SnapshotInterval.Milliseconds(),
		}, nil, callOpt{idempotent: true, timeout: 2 * time.Minute})
	})
}

// createClients creates the consumers first, so no message is published
// before its subscriptions exist.
func (c *coordinator) createClients(ctx context.Context) error {
	err := each(c.plan.ConsumerWorkers, func(i int) error {
		return c.clients[i].post(ctx, protocol.PathCreateConsumers,
			protocol.CreateConsumersRequest{Consumers: c.plan.Consumers[i]}, nil, callOpt{timeout: 3 * time.Minute})
	})
	if err != nil {
		return fmt.Errorf("creating consumers: %w", err)
	}
	err = each(c.plan.ProducerWorkers, func(i int) error {
		return c.clients[i].post(ctx, protocol.PathCreateProducers,
			protocol.CreateProducersRequest{Producers: c.plan.Producers[i]}, nil, callOpt{timeout: 3 * time.Minute})
	})
	if err != nil {
		return fmt.Errorf("creating producers: %w", err)
	}
	return nil
}

func (c *coordinator) clockOffsets(ctx context.Context) error {
	c.res.ClockOffsets = make([]protocol.ClockOffset, len(c.clients))
	err := each(c.all(), func(i int) error {
		off, err := c.clients[i].clockOffset(ctx, c.o.ClockSamples)
		c.res.ClockOffsets[i] = off
		return err
	})
	if err != nil {
		return err
	}
	for i, off := range c.res.ClockOffsets {
		c.logf("worker %d clock offset %+d µs ± %d µs", i, off.OffsetMicros, off.UncertaintyMicros)
	}
	prod := map[uint32]int64{}
	for id, wk := range c.plan.ProducerWorker {
		prod[id] = c.res.ClockOffsets[wk].OffsetMicros
	}
	return each(c.plan.ConsumerWorkers, func(i int) error {
		return c.clients[i].post(ctx, protocol.PathClockOffsets, protocol.ClockOffsetsRequest{
			SelfMicros: c.res.ClockOffsets[i].OffsetMicros, ProducerMicros: prod,
		}, nil, callOpt{idempotent: true})
	})
}

// counters reads every worker's counters.
func (c *coordinator) counters(ctx context.Context) ([]protocol.CountersResponse, error) {
	out := make([]protocol.CountersResponse, len(c.clients))
	err := each(c.all(), func(i int) error {
		return c.clients[i].get(ctx, protocol.PathCounters, &out[i], callOpt{})
	})
	return out, err
}

// probe sends probe messages until every subscription has received one
// (OMB #275 waits forever; here the wait is bounded and the error names
// the subscriptions that never got a message).
func (c *coordinator) probe(ctx context.Context) error {
	if len(c.plan.Subscriptions) == 0 {
		// Produce-only: a probe still proves every producer can publish.
		return each(c.plan.ProducerWorkers, func(i int) error {
			return c.clients[i].post(ctx, protocol.PathProbe, nil, nil, callOpt{timeout: c.o.ProbeTimeout})
		})
	}
	deadline := time.Now().Add(c.o.ProbeTimeout)
	var missing []string
	for attempt := 0; ; attempt++ {
		if attempt%5 == 0 {
			err := each(c.plan.ProducerWorkers, func(i int) error {
				return c.clients[i].post(ctx, protocol.PathProbe, nil, nil, callOpt{timeout: c.o.ProbeTimeout})
			})
			if err != nil {
				return fmt.Errorf("probing producers: %w", err)
			}
		}
		cs, err := c.counters(ctx)
		if err != nil {
			return err
		}
		got := map[SubscriptionRef]bool{}
		for _, cr := range cs {
			for _, s := range cr.Subscriptions {
				if s.Probes > 0 {
					got[SubscriptionRef{Topic: s.Topic, Name: s.Subscription, CatchUp: s.CatchUp}] = true
				}
			}
		}
		missing = missing[:0]
		for _, s := range c.plan.Subscriptions {
			if !got[s] {
				missing = append(missing, s.Name+" on "+s.Topic)
			}
		}
		if len(missing) == 0 {
			c.logf("probe: every subscription (%d) received a message", len(c.plan.Subscriptions))
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("probe: after %s, %d of %d subscriptions never received a message: %s; check that the consumers can reach the brokers and subscribe from the earliest position",
				c.o.ProbeTimeout, len(missing), len(c.plan.Subscriptions), strings.Join(missing, ", "))
		}
		if err := sleep(ctx, time.Second); err != nil {
			return err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// setRate tells every producer worker its share of total.
func (c *coordinator) setRate(ctx context.Context, total float64) error {
	rates := c.plan.WorkerRates(total)
	return each(c.plan.ProducerWorkers, func(i int) error {
		return c.clients[i].post(ctx, protocol.PathAdjustRate, protocol.AdjustRateRequest{RatePerSec: rates[i]}, nil, callOpt{idempotent: true})
	})
}

// setPhase starts a phase on every worker at (nearly) the same time.
func (c *coordinator) setPhase(ctx context.Context, p stats.Phase) error {
	c.logf("phase %s", p)
	return each(c.all(), func(i int) error {
		return c.clients[i].post(ctx, protocol.PathPhase, protocol.PhaseRequest{Phase: string(p)}, nil, callOpt{})
	})
}

func (c *coordinator) pause(ctx context.Context, pause, catchUpOnly bool) error {
	path := protocol.PathResumeConsumers
	if pause {
		path = protocol.PathPauseConsumers
	}
	return each(c.plan.ConsumerWorkers, func(i int) error {
		return c.clients[i].post(ctx, path, protocol.PauseRequest{CatchUpOnly: catchUpOnly}, nil, callOpt{idempotent: true})
	})
}

// collect fetches every worker's new snapshots; cut closes the current
// interval first (the final read).
func (c *coordinator) collect(ctx context.Context, cut bool) error {
	c.collMu.Lock()
	defer c.collMu.Unlock()
	got := make([][]stats.Snapshot, len(c.clients))
	err := each(c.all(), func(i int) error {
		var r protocol.StatsResponse
		q := fmt.Sprintf("after=%d", c.lastSeq[i])
		if cut {
			q += "&cut=true"
		}
		// Not retried blindly when cut: a second cut would only add an
		// empty interval, which is harmless, so retry it all the same.
		if err := c.clients[i].get(ctx, protocol.PathStats, &r, callOpt{query: q}); err != nil {
			return err
		}
		got[i] = r.Snapshots
		return nil
	})
	for i, snaps := range got {
		for _, s := range snaps {
			if s.Seq > c.lastSeq[i] {
				c.snaps = append(c.snaps, s)
				c.lastSeq[i] = s.Seq
			}
		}
	}
	return err
}

// startCollector polls the workers' snapshots once per interval and logs
// a line per interval, until the returned stop is called.
func (c *coordinator) startCollector(ctx context.Context) (stop func()) {
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(c.o.SnapshotInterval)
		defer t.Stop()
		for {
			select {
			case <-cctx.Done():
				return
			case <-t.C:
				c.collMu.Lock()
				n := len(c.snaps)
				c.collMu.Unlock()
				if err := c.collect(cctx, false); err != nil {
					c.logf("reading stats: %v (retried at the next interval)", err)
					continue
				}
				c.logInterval(n)
				c.reportProgress(n)
				c.checkpoint()
			}
		}
	}()
	return func() { cancel(); <-done }
}

func (c *coordinator) logInterval(from int) {
	c.collMu.Lock()
	fresh := append([]stats.Snapshot(nil), c.snaps[from:]...)
	c.collMu.Unlock()
	// One line per interval: a producer worker's and a consumer worker's
	// snapshot of the same interval may arrive in different polls, so
	// group what arrived by phase and index.
	type key struct {
		p stats.Phase
		i int
	}
	groups := map[key][]stats.Snapshot{}
	var order []key
	for _, s := range fresh {
		k := key{s.Phase, s.Index}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], s)
	}
	for _, k := range order {
		m := stats.Merge(groups[k]...)
		pub := m.Producer.PublishLatency.Quantiles()
		e2e := m.Consumer.EndToEnd.Quantiles()
		c.logf("%-13s #%-3d pub %8.0f msg/s  cons %8.0f msg/s  pub p50 %6.2f ms p99 %7.2f ms  e2e p50 %7.2f ms p99 %8.2f ms  (%d workers)",
			m.Phase, k.i, m.Rate(m.Producer.Acked), m.Rate(m.Consumer.Total().Received),
			float64(pub.P50)/1000, float64(pub.P99)/1000, float64(e2e.P50)/1000, float64(e2e.P99)/1000, m.Workers)
	}
}

// checkpoint hands the results so far to Options.Checkpoint. Only what is
// fixed before the load starts is shared with the run's goroutine; the
// snapshots are copied under their lock.
func (c *coordinator) checkpoint() {
	if c.o.Checkpoint == nil {
		return
	}
	c.collMu.Lock()
	snaps := append([]stats.Snapshot(nil), c.snaps...)
	c.collMu.Unlock()
	c.o.Checkpoint(&Result{
		RunID: c.res.RunID, System: c.res.System, Workload: c.res.Workload, Plan: c.plan, Workers: c.res.Workers,
		Snapshots: snaps, ClockOffsets: c.res.ClockOffsets, Durability: c.res.Durability,
		Start: c.res.Start, End: time.Now(),
	})
}

// reportProgress hands the newest interval every worker has delivered to
// Options.Progress.
func (c *coordinator) reportProgress(from int) {
	if c.o.Progress == nil {
		return
	}
	c.collMu.Lock()
	fresh := append([]stats.Snapshot(nil), c.snaps[from:]...)
	c.collMu.Unlock()
	if p, ok := c.progress.add(fresh, time.Now()); ok {
		c.o.Progress(p)
	}
}

// runLoad runs the phases from the synchronized start to the stop.
func (c *coordinator) runLoad(ctx context.Context) error {
	wl := c.wl
	maxRate := workload.IsMaxRate(wl)
	rate := float64(wl.ProducerRate)
	if maxRate {
		rate = c.o.RateSearch.initial()
	}
	first := stats.PhaseMeasure
	switch {
	case workload.WarmupDuration(wl) > 0:
		first = stats.PhaseWarmup
	case maxRate:
		first = stats.PhaseRateSearch
	case workload.IsBacklog(wl):
		first = stats.PhaseBacklogBuild
	}
	// The second between the start command and the start itself carries
	// no load. Without a warm-up it would be the measured phase's first
	// second and dilute its rates, so it is labelled warm-up (the measured
	// phase then starts at the start, below).
	lead := first
	if lead == stats.PhaseMeasure {
		lead = stats.PhaseWarmup
	}
	// Start a second from now on the coordinator's clock, translated into
	// each worker's clock, so every producer's schedule begins together.
	startAt := time.Now().Add(time.Second).UnixMicro()
	rates := c.plan.WorkerRates(rate)
	err := each(c.plan.ProducerWorkers, func(i int) error {
		return c.clients[i].post(ctx, protocol.PathStartLoad, protocol.StartLoadRequest{
			StartAtMicros: startAt + c.res.ClockOffsets[i].OffsetMicros, RatePerSec: rates[i], Phase: string(lead),
		}, nil, callOpt{})
	})
	if err != nil {
		return fmt.Errorf("starting the load: %w", err)
	}
	// Consumer-only workers label their snapshots too.
	if err := each(c.consumerOnly(), func(i int) error {
		return c.clients[i].post(ctx, protocol.PathPhase, protocol.PhaseRequest{Phase: string(lead)}, nil, callOpt{})
	}); err != nil {
		return err
	}
	// The measured phase's end is known from the start unless a rate
	// search or a backlog comes first, which run until they are done.
	var measureEnd time.Time
	if !maxRate && !workload.IsBacklog(wl) {
		measureEnd = time.UnixMicro(startAt).Add(workload.WarmupDuration(wl) + workload.TestDuration(wl))
	}
	c.progress.started(time.UnixMicro(startAt), measureEnd)
	stopCollector := c.startCollector(ctx)
	defer stopCollector()
	if err := sleep(ctx, time.Until(time.UnixMicro(startAt))); err != nil {
		return err
	}
	c.logf("load started at %.0f msg/s (phase %s)", rate, first)

	if d := workload.WarmupDuration(wl); d > 0 {
		if err := sleep(ctx, d); err != nil {
			return err
		}
	}
	if maxRate {
		if first != stats.PhaseRateSearch {
			if err := c.setPhase(ctx, stats.PhaseRateSearch); err != nil {
				return err
			}
		}
		found, trace, err := c.searchRate(ctx, rate)
		c.res.RateSearch = trace
		if err != nil {
			return err
		}
		rate = found
		if err := c.setRate(ctx, rate); err != nil {
			return err
		}
	}
	if workload.IsBacklog(wl) {
		if err := c.backlog(ctx, rate, first == stats.PhaseBacklogBuild); err != nil {
			return err
		}
	}
	c.res.MeasuredRate = rate
	if err := c.setPhase(ctx, stats.PhaseMeasure); err != nil {
		return err
	}
	c.progress.measuring(time.Now(), workload.TestDuration(wl))
	if err := sleep(ctx, workload.TestDuration(wl)); err != nil {
		return err
	}
	if err := c.setPhase(ctx, PhaseCooldown); err != nil {
		return err
	}
	return c.finish(ctx)
}

func (c *coordinator) consumerOnly() []int {
	prod := map[int]bool{}
	for _, i := range c.plan.ProducerWorkers {
		prod[i] = true
	}
	var out []int
	for _, i := range c.plan.ConsumerWorkers {
		if !prod[i] {
			out = append(out, i)
		}
	}
	return out
}

// finish stops the load, waits (bounded) for the consumers to receive every
// acknowledged message, reads the final snapshots and does the accounting.
func (c *coordinator) finish(ctx context.Context) error {
	err := each(c.plan.ProducerWorkers, func(i int) error {
		return c.clients[i].post(ctx, protocol.PathStopLoad, nil, nil, callOpt{idempotent: true, timeout: 2 * time.Minute})
	})
	if err != nil {
		return fmt.Errorf("stopping the load: %w", err)
	}
	if len(c.plan.Subscriptions) > 0 {
		deadline := time.Now().Add(c.o.CatchUpTimeout)
		// A consumer that received nothing new for 15 s will not catch up:
		// what it misses is lost, and the accounting says so.
		var lastProgress time.Time
		var lastBehind string
		for {
			cs, err := c.counters(ctx)
			if err != nil {
				return err
			}
			behind := behindSubscriptions(c.plan.Subscriptions, cs)
			if len(behind) == 0 {
				break
			}
			if b := strings.Join(behind, ", "); b != lastBehind {
				lastBehind, lastProgress = b, time.Now()
			}
			if time.Now().After(deadline) || time.Since(lastProgress) > 15*time.Second {
				c.logf("after the load stopped, %d subscriptions have not received every acknowledged message: %s (the accounting reports them)",
					len(behind), lastBehind)
				break
			}
			if err := sleep(ctx, 500*time.Millisecond); err != nil {
				return err
			}
		}
	}
	if err := c.collect(ctx, true); err != nil {
		return fmt.Errorf("reading the final stats: %w", err)
	}
	answers := make([]protocol.ReceivedResponse, len(c.clients))
	localDups := map[SubscriptionRef]int64{}
	var mu sync.Mutex
	err = each(c.all(), func(i int) error {
		if err := c.clients[i].get(ctx, protocol.PathReceived, &answers[i], callOpt{timeout: 2 * time.Minute}); err != nil {
			return err
		}
		var cr protocol.CountersResponse
		if err := c.clients[i].get(ctx, protocol.PathCounters, &cr, callOpt{}); err != nil {
			return err
		}
		mu.Lock()
		for _, s := range cr.Subscriptions {
			localDups[SubscriptionRef{Topic: s.Topic, Name: s.Subscription, CatchUp: s.CatchUp}] += s.Duplicates
		}
		mu.Unlock()
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading the received messages: %w", err)
	}
	acc, err := Account(c.plan.Subscriptions, answers, localDups)
	c.res.Accounting = acc
	if err != nil {
		return err
	}
	c.logf("accounting: sent %d, acked %d, failed %d, received %d, lost %d, duplicates %d",
		acc.Sent, acc.Acked, acc.Failed, acc.Received, acc.Lost, acc.Duplicates)
	return nil
}

// behindSubscriptions names the subscriptions that have received fewer
// distinct messages than their topic's producers had acknowledged.
func behindSubscriptions(subs []SubscriptionRef, cs []protocol.CountersResponse) []string {
	acked := map[string]int64{}
	unique := map[SubscriptionRef]int64{}
	for _, cr := range cs {
		for _, p := range cr.Producers {
			acked[p.Topic] += p.Acked
		}
		for _, s := range cr.Subscriptions {
			unique[SubscriptionRef{Topic: s.Topic, Name: s.Subscription, CatchUp: s.CatchUp}] += s.Unique
		}
	}
	var out []string
	for _, s := range subs {
		if unique[s] < acked[s.Topic] {
			out = append(out, fmt.Sprintf("%s (%d of %d)", s.Name, unique[s], acked[s.Topic]))
		}
	}
	sort.Strings(out)
	return out
}

// cleanup stops every worker and deletes the topics, with its own bounded
// context so a cancelled run still cleans up.
func (c *coordinator) cleanup(topicsCreated, failed bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var errs []error
	// A last read, so a failed or interrupted run still returns what was
	// measured, up to now: the interval in progress is closed too.
	_ = c.collect(ctx, failed)
	err := each(c.all(), func(i int) error {
		q := ""
		if i == 0 && topicsCreated {
			q = "keepDriver=true"
		}
		return c.clients[i].post(ctx, protocol.PathStop, nil, nil, callOpt{idempotent: true, timeout: 2 * time.Minute, query: q})
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("stopping workers: %w", err))
	}
	if topicsCreated {
		if err := c.clients[0].post(ctx, protocol.PathDeleteTopics, nil, nil, callOpt{idempotent: true, timeout: 2 * time.Minute}); err != nil {
			errs = append(errs, fmt.Errorf("deleting the run's topics (delete topics starting with %s by hand): %w", c.o.Driver.RunID, err))
		}
	}
	if c.o.ShutdownWorkers {
		// Best effort: a worker that does not answer is ended by its Job's
		// deadline or the run's teardown.
		_ = each(c.all(), func(i int) error {
			return c.clients[i].post(ctx, protocol.PathShutdown, nil, nil, callOpt{idempotent: true, timeout: 10 * time.Second})
		})
	}
	return errors.Join(errs...)
}
