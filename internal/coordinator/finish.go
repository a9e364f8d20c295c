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
