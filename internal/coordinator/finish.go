package coordinator

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/streambench/streambench-operator/internal/protocol"
	"github.com/streambench/streambench-operator/internal/stats"
)

// finish stops the load, waits (bounded) for the consumers to receive every
// acknowledged message, reads the final snapshots and does the accounting.
func (c *coordinator) finish(ctx context.Context) error {
	err := each(c.plan.ProducerWorkers, func(i int) error {
		return c.clients[i].post(ctx, protocol.PathStopLoad, nil, nil, callOpt{idempotent: true, timeout: 2 * time.Minute})
	})
	if err != nil {
		return fmt.Errorf("stopping the load: %w", err)
	}
	unfinished, err := c.finalDrain(ctx)
	if err != nil {
		return err
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
	acc, err := Account(c.plan.Subscriptions, answers, localDups, unfinished)
	c.res.Accounting = acc
	if err != nil {
		return err
	}
	c.res.Accounted = true
	c.logf("accounting: sent %d, acked %d, failed %d, unanswered %d, received %d, lost %d, not consumed %d, duplicates %d",
		acc.Sent, acc.Acked, acc.Failed, acc.Unanswered, acc.Received, acc.Lost, acc.NotConsumed, acc.Duplicates)
	return nil
}

// finalDrain waits, after the load stopped, until every subscription has
// received every acknowledged message of its topic, or has stalled: it
// received nothing new for CatchUpStall, and what it misses then is lost.
// Once its bound (CatchUpTimeout, or drainBound) has passed it also ends for a subscription that
// receives more (it is slow, not losing: what it had not read is
// reported not consumed); one that receives nothing is waited for until it
// does or stalls, so a loss is never cut short into "not consumed" nor a
// slow reader into "lost". It returns the subscriptions it ended still
// receiving.
func (c *coordinator) finalDrain(ctx context.Context) (map[SubscriptionRef]bool, error) {
	if len(c.plan.Subscriptions) == 0 {
		return nil, nil
	}
	start := time.Now()
	var bound time.Duration
	var deadline time.Time
	type progress struct {
		unique int64
		at     time.Time
	}
	seen := map[SubscriptionRef]progress{}
	for {
		cs, err := c.counters(ctx)
		if err != nil {
			return nil, err
		}
		now := time.Now()
		lagging := behindSubscriptions(c.plan.Subscriptions, cs)
		if deadline.IsZero() {
			// The first read is the backlog at the stop.
			bound = c.finalDrainBound(ctx, lagging)
			deadline = start.Add(bound)
		}
		var stalled, waiting, receiving []string
		unfinished := map[SubscriptionRef]bool{}
		for _, b := range lagging {
			p, ok := seen[b.ref]
			switch {
			case !ok: // the stall is timed from the load's stop
				p = progress{b.unique, start}
			case b.unique > p.unique:
				p = progress{b.unique, now}
			}
			seen[b.ref] = p
			switch {
			case now.Sub(p.at) >= c.o.CatchUpStall:
				stalled = append(stalled, b.String())
			case now.After(deadline) && p.at.After(deadline):
				receiving = append(receiving, b.String())
				unfinished[b.ref] = true
			default:
				waiting = append(waiting, b.String())
			}
		}
		if len(waiting) == 0 {
			if len(stalled) > 0 {
				c.logf("after the load stopped, %d subscriptions received nothing new for %s with acknowledged messages missing: %s (the accounting reports them lost)",
					len(stalled), c.o.CatchUpStall, strings.Join(stalled, ", "))
			}
			if len(receiving) > 0 {
				c.notef("the consumers were still receiving when the final drain's %s ran out: %s; what they had not read is reported not consumed (the backlog at the end), not lost",
					bound.Round(time.Second), strings.Join(receiving, ", "))
			}
			return unfinished, nil
		}
		if err := sleep(ctx, 500*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// finalDrainBound is CatchUpTimeout, or drainBound of the largest backlog
// left to a subscription at the stop.
func (c *coordinator) finalDrainBound(ctx context.Context, lagging []behind) time.Duration {
	if c.o.CatchUpTimeout > 0 {
		return c.o.CatchUpTimeout
	}
	var backlog int64
	for _, b := range lagging {
		backlog = max(backlog, b.acked-b.unique)
	}
	var remaining time.Duration
	if d, ok := ctx.Deadline(); ok {
		remaining = time.Until(d)
	}
	rate := c.measuredConsumeRate()
	bound := drainBound(backlog, rate, remaining)
	if backlog > 0 {
		c.logf("final drain: up to %s for a backlog of %d messages at the measured %.0f msg/s per subscription", bound.Round(time.Second), backlog, rate)
	}
	return bound
}

// behind is a subscription that has received fewer distinct messages than
// its topic's producers had acknowledged.
type behind struct {
	ref           SubscriptionRef
	unique, acked int64
}

func (b behind) String() string { return fmt.Sprintf("%s (%d of %d)", b.ref.Name, b.unique, b.acked) }

// behindSubscriptions lists the subscriptions that are behind, by name.
func behindSubscriptions(subs []SubscriptionRef, cs []protocol.CountersResponse) []behind {
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
	var out []behind
	for _, s := range subs {
		if unique[s] < acked[s.Topic] {
			out = append(out, behind{s, unique[s], acked[s.Topic]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ref.Name < out[j].ref.Name })
	return out
}

// CleanupTimeout bounds the cleanup; the coordinator pod's termination
// grace period (internal/provision/workers) covers it.
const CleanupTimeout = 3 * time.Minute

// cleanup stops every worker and deletes the topics, with its own bounded
// context so a cancelled run still cleans up.
func (c *coordinator) cleanup(topicsCreated, failed bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), CleanupTimeout)
	defer cancel()
	start := time.Now()
	defer func() {
		c.logf("cleanup (final stats read, workers stopped, topics deleted) took %s", time.Since(start).Round(time.Millisecond))
	}()
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
		if err := c.deleteTopics(ctx); err != nil {
			errs = append(errs, fmt.Errorf("deleting the run's topics (delete topics starting with %s by hand): %w", c.o.Driver.RunID, err))
		}
	}
	if c.o.ShutdownWorkers {
		shutdown(ctx, c.clients)
	}
	return errors.Join(errs...)
}

// deleteRetryPause is the wait between two rounds of deleting the topics.
const deleteRetryPause = 5 * time.Second

// deleteTopics asks the first worker to delete the run's topics, again
// every deleteRetryPause for up to Options.DeleteRetry while it fails: a
// broker that does not answer at the cleanup usually does again soon (cold
// run 12: a managed Kafka under a load of 20 refused connections for the
// few seconds the client's own retries last, and a run that had measured
// everything, nothing lost, ended Failed).
func (c *coordinator) deleteTopics(ctx context.Context) error {
	deadline := time.Now().Add(c.o.DeleteRetry)
	for round := 1; ; round++ {
		err := c.clients[0].post(ctx, protocol.PathDeleteTopics, nil, nil, callOpt{idempotent: true, timeout: 2 * time.Minute})
		if err == nil {
			if round > 1 {
				c.logf("the run's topics deleted at round %d", round)
			}
			return nil
		}
		if time.Now().Add(deleteRetryPause).After(deadline) {
			return err
		}
		c.logf("deleting the run's topics: %v; again in %s", err, deleteRetryPause)
		if sleep(ctx, deleteRetryPause) != nil {
			return err
		}
	}
}

// measuredConsumeRate is what a subscription read per second, on average,
// in the measured phase (0 without one).
func (c *coordinator) measuredConsumeRate() float64 {
	c.collMu.Lock()
	ms := stats.OfPhase(c.snaps, stats.PhaseMeasure)
	c.collMu.Unlock()
	n := len(c.plan.Subscriptions)
	if len(ms) == 0 || n == 0 {
		return 0
	}
	m := stats.Merge(ms...)
	return m.Rate(m.Consumer.Total().Received) / float64(n)
}

// ShutdownWorkers asks every worker process to exit, as
// Options.ShutdownWorkers does at the end of a run: for a repeated run
// that ends before its last repeat, which would have asked.
func ShutdownWorkers(ctx context.Context, workers []string, token string) {
	o := Options{Workers: workers, Token: token}
	o.defaults()
	ctx, cancel := context.WithTimeout(ctx, CleanupTimeout)
	defer cancel()
	var clients []*client
	for _, u := range workers {
		clients = append(clients, newClient(u, o.CallTimeout, o.Retries, o.Token))
	}
	shutdown(ctx, clients)
}

// shutdown asks each worker to exit. Best effort: a worker that does not
// answer is ended by its Job's deadline or the run's teardown.
func shutdown(ctx context.Context, clients []*client) {
	idx := make([]int, len(clients))
	for i := range idx {
		idx[i] = i
	}
	_ = each(idx, func(i int) error {
		return clients[i].post(ctx, protocol.PathShutdown, nil, nil, callOpt{idempotent: true, timeout: 10 * time.Second})
	})
}
