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
	"sync"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/protocol"
	"github.com/streambench/streambench-operator/internal/stats"
	"github.com/streambench/streambench-operator/internal/workload"
)

type coordinator struct {
	o       Options
	wl      v1alpha1.WorkloadSpec
	clients []*client
	plan    Plan
	res     *Result

	collMu    sync.Mutex
	lastSeq   []uint64
	snaps     []stats.Snapshot
	progress  *progressTracker
	intervals *intervalTracker
	// kick makes the collector poll at once (kickCollector).
	kick chan struct{}
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
	c := &coordinator{o: o, wl: wl, lastSeq: make([]uint64, len(o.Workers)), progress: newProgressTracker(len(o.Workers)),
		intervals: newIntervalTracker(len(o.Workers), o.SnapshotInterval), kick: make(chan struct{}, 1)}
	for _, u := range o.Workers {
		c.clients = append(c.clients, newClient(u, o.CallTimeout, o.Retries, o.Token))
	}
	c.res = &Result{RunID: o.Driver.RunID, System: o.Driver.System, Workload: wl, Workers: o.Workers, Start: time.Now()}
	// topicsMade: the run may have topics to delete.
	topicsMade := false
	defer func() {
		c.res.End = time.Now()
		cerr := c.cleanup(topicsMade, err != nil)
		c.res.Snapshots = c.snaps
		if len(c.snaps) > 0 {
			c.res.Collection = c.intervals.summary()
		}
		c.judgeMeasuredRate()
		err = errors.Join(err, cerr)
		res = c.res
	}()
	if err := c.initialize(ctx); err != nil {
		return nil, err
	}
	var topics protocol.CreateTopicsResponse
	if err := c.clients[0].post(ctx, protocol.PathCreateTopics, protocol.CreateTopicsRequest{
		Topics: int(wl.Topics), PartitionsPerTopic: wl.PartitionsPerTopic,
	}, &topics, callOpt{timeout: protocol.CreateTopicsTimeout}); err != nil {
		// Stopped during the call (SIGTERM, the deadline: a run deleted
		// as its topics appear), the run cannot know what was made. The
		// worker finishes the creation regardless, and the cleanup's
		// deletion waits for it and removes every topic. An error the
		// worker answered with is not followed by a deletion: it is
		// mostly brokers that cannot be reached, where a deletion adds
		// only its own timeout to the run's error.
		topicsMade = ctx.Err() != nil
		return nil, fmt.Errorf("creating topics: %w", err)
	}
	topicsMade = true
	if o.ReadDurability {
		c.readDurability(ctx, topics.Topics)
	}
	if o.ReadFailureSettings {
		c.readFailureSettings(ctx)
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

// notef logs a remark and keeps it in the result's notes.
func (c *coordinator) notef(format string, args ...any) {
	c.logf(format, args...)
	c.res.Notes = append(c.res.Notes, fmt.Sprintf(format, args...))
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

// runLoad runs the phases from the synchronized start to the stop.
func (c *coordinator) runLoad(ctx context.Context) (err error) {
	ctx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	defer func() {
		// An abort by the collector is the reason, whatever call it cut.
		if cause := context.Cause(ctx); err != nil && cause != nil && !errors.Is(cause, context.Canceled) && !errors.Is(err, cause) {
			err = fmt.Errorf("%w (then: %v)", cause, err)
		}
	}()
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
	err = each(c.plan.ProducerWorkers, func(i int) error {
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
	stopCollector := c.startCollector(ctx, abort)
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
	measureStart := time.Now()
	c.res.MeasureStart = measureStart
	c.progress.measuring(measureStart, workload.TestDuration(wl))
	if c.o.OnMeasure != nil {
		c.o.OnMeasure(measureStart)
	}
	if err := c.measure(ctx); err != nil {
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
