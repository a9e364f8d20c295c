package coordinator

import (
	"context"
	"fmt"
	"time"

	"github.com/streambench/streambench-operator/internal/pagecache"
	"github.com/streambench/streambench-operator/internal/protocol"
	"github.com/streambench/streambench-operator/internal/stats"
	"github.com/streambench/streambench-operator/internal/workload"
)

// backlogOf is the backlog in messages of the paused (catch-up) side: per
// topic, what its producers had acknowledged minus what its least-behind
// drained subscription received (the data is stored once per topic however
// many subscriptions read it), summed over topics; and the bytes the drained
// subscriptions have read in total.
func backlogOf(subs []SubscriptionRef, drained func(SubscriptionRef) bool, cs []protocol.CountersResponse) (msgs, readBytes int64) {
	acked := map[string]int64{}
	unique := map[SubscriptionRef]int64{}
	for _, cr := range cs {
		for _, p := range cr.Producers {
			acked[p.Topic] += p.Acked
		}
		for _, s := range cr.Subscriptions {
			ref := SubscriptionRef{Topic: s.Topic, Name: s.Subscription, CatchUp: s.CatchUp}
			unique[ref] += s.Unique
			if drained(ref) {
				readBytes += s.Bytes
			}
		}
	}
	perTopic := map[string]int64{}
	seen := map[string]bool{}
	for _, s := range subs {
		if !drained(s) {
			continue
		}
		b := acked[s.Topic] - unique[s]
		if b < 0 {
			b = 0
		}
		if !seen[s.Topic] || b < perTopic[s.Topic] {
			perTopic[s.Topic] = b
		}
		seen[s.Topic] = true
	}
	for _, b := range perTopic {
		msgs += b
	}
	return msgs, readBytes
}

// drainGoal is the backlog (bytes) at which the drain is done: what
// backlogDrainRatio leaves, but at least one second of publishing, since
// with producers running a caught-up subscription still trails the head by
// the messages in flight, and a ratio of 1.0 would otherwise wait for a
// backlog of exactly zero that a moving head never shows.
func drainGoal(built int64, ratio, rate float64, messageSize int64) int64 {
	left := int64(float64(built) * (1 - ratio))
	inFlight := int64(rate) * messageSize
	return max(left, inFlight)
}

// plateau tracks the smallest backlog seen; the drain plateaued when it has
// not shrunk by at least 1% of the built backlog for the plateau window.
type plateau struct {
	best    int64
	bestAt  time.Time
	minDrop int64
	window  time.Duration
	started bool
}

func (p *plateau) observe(now time.Time, backlog int64) (stalled bool) {
	if !p.started || backlog <= p.best-p.minDrop {
		p.best, p.bestAt, p.started = backlog, now, true
		return false
	}
	return now.Sub(p.bestAt) >= p.window
}

// backlog builds the backlog with the (catch-up) consumers paused, then
// resumes them and measures the drain. In the mixed workload only the
// catch-up subscriptions pause; the tailing ones keep reading and the
// publish latency of the drain is labelled with its own phase.
func (c *coordinator) backlog(ctx context.Context, rate float64, alreadyInPhase bool) error {
	wl := c.wl
	mixed := workload.IsMixed(wl)
	drained := func(s SubscriptionRef) bool { return !mixed || s.CatchUp }
	size := int64(wl.MessageSize)
	target := workload.BacklogBytes(wl)
	br := &BacklogResult{TargetBytes: target}
	c.res.Backlog = br

	if err := c.pause(ctx, true, mixed); err != nil {
		return fmt.Errorf("pausing consumers: %w", err)
	}
	if !alreadyInPhase {
		if err := c.setPhase(ctx, stats.PhaseBacklogBuild); err != nil {
			return err
		}
	}
	buildStart := time.Now()
	timeout := c.o.BacklogBuildTimeout
	if timeout <= 0 {
		// The rate in force (found by the search, or producerRate): the
		// run's deadline allows the same at producerRate.
		timeout = workload.BacklogBuildTimeout(c.wl, rate)
	}
	var built int64
	for {
		cs, err := c.counters(ctx)
		if err != nil {
			return err
		}
		msgs, _ := backlogOf(c.plan.Subscriptions, drained, cs)
		built = msgs * size
		if built >= target {
			break
		}
		if time.Since(buildStart) > timeout {
			return fmt.Errorf("backlog: built %.1f MB of %.1f MB (spec.workload.consumerBacklogSizeGB) in %s; the producers publish too slowly for this backlog: raise producerRate or lower consumerBacklogSizeGB",
				float64(built)/1e6, float64(target)/1e6, timeout.Round(time.Second))
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
	br.BuiltBytes, br.BuildSeconds = built, time.Since(buildStart).Seconds()
	c.logf("backlog: %.1f MB built in %.1f s", float64(built)/1e6, br.BuildSeconds)
	if c.o.PageCache != nil {
		var err error
		if built, err = c.dropPageCache(ctx, br, drained); err != nil {
			return err
		}
	}
	c.logf("backlog: draining %.1f MB", float64(built)/1e6)

	if err := c.setPhase(ctx, stats.PhaseDrain); err != nil {
		return err
	}
	cs, err := c.counters(ctx)
	if err != nil {
		return err
	}
	_, readBefore := backlogOf(c.plan.Subscriptions, drained, cs)
	if err := c.pause(ctx, false, mixed); err != nil {
		return fmt.Errorf("resuming consumers: %w", err)
	}
	drainStart := time.Now()
	goal := drainGoal(built, workload.BacklogDrainRatio(wl), rate, size)
	pl := plateau{minDrop: max(built/100, 1), window: c.o.DrainPlateau}
	for {
		cs, err := c.counters(ctx)
		if err != nil {
			return err
		}
		msgs, read := backlogOf(c.plan.Subscriptions, drained, cs)
		left := msgs * size
		now := time.Now()
		if left <= goal {
			br.RemainingBytes = left
			br.DrainSeconds = now.Sub(drainStart).Seconds()
			br.DrainedBytes = read - readBefore
			if br.DrainSeconds > 0 {
				br.DrainMBPerSec = float64(br.DrainedBytes) / 1e6 / br.DrainSeconds
			}
			c.logf("backlog: drained to %.1f MB in %.1f s (%.1f MB/s read)", float64(left)/1e6, br.DrainSeconds, br.DrainMBPerSec)
			return nil
		}
		if pl.observe(now, left) {
			return fmt.Errorf("backlog drain plateaued: %.1f MB of %.1f MB still unread after %s, with no progress for %s; the consumers read no faster than the producers publish (OMB #334): lower producerRate or spec.workload.backlogDrainRatio",
				float64(left)/1e6, float64(built)/1e6, now.Sub(drainStart).Round(time.Second), c.o.DrainPlateau)
		}
		if now.Sub(drainStart) > c.o.DrainTimeout {
			return fmt.Errorf("backlog drain: %.1f MB of %.1f MB still unread after the drain timeout %s; raise the timeout or lower consumerBacklogSizeGB",
				float64(left)/1e6, float64(built)/1e6, c.o.DrainTimeout)
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// dropPageCache drops the broker nodes' page cache between the build and
// the drain, and returns the backlog as it is after the drop. The study
// dropped the page cache before every catch-up test: the backlog was just
// written and sits in the brokers' memory, and a drain served from there
// measures memory, not the disk. The (catch-up) consumers stay paused
// meanwhile; the producers keep publishing, as stopping them would put a
// gap into the publish series, so what they write during the drop is the
// backlog's warm tail and is counted in BuiltBytes.
func (c *coordinator) dropPageCache(ctx context.Context, br *BacklogResult, drained func(SubscriptionRef) bool) (int64, error) {
	start := time.Now()
	c.logf("backlog: dropping the page cache of the broker nodes (spec.testbed.dropPageCache)")
	drop, err := c.o.PageCache.DropPageCache(ctx, pagecache.ReasonBeforeDrain)
	c.res.PageCacheDrops = append(c.res.PageCacheDrops, drop)
	br.PageCacheDropSeconds = time.Since(start).Seconds()
	if err != nil {
		return 0, err
	}
	if drop.Dropped {
		c.logf("backlog: page cache dropped on %v in %.1f s", drop.Nodes, br.PageCacheDropSeconds)
	} else {
		c.logf("backlog: page cache NOT dropped: %s", drop.Message)
	}
	cs, err := c.counters(ctx)
	if err != nil {
		return 0, err
	}
	msgs, _ := backlogOf(c.plan.Subscriptions, drained, cs)
	br.BuiltBytes = msgs * int64(c.wl.MessageSize)
	return br.BuiltBytes, nil
}
