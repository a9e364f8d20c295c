package coordinator

import (
	"context"
	"fmt"
	"time"

	"github.com/streambench/streambench-operator/internal/protocol"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
	"github.com/streambench/streambench-operator/internal/workload"
)

// RateSearchOptions tune the max-rate search (producerRate 0).
type RateSearchOptions struct {
	// Config is the search controller's (ratesearch.go).
	Config MaxRateConfig
	// Period is one evaluation period (default 3 s, as OMB's
	// RateController).
	Period time.Duration
}

func (o RateSearchOptions) initial() float64 {
	if o.Config.Initial > 0 {
		return o.Config.Initial
	}
	return 10000
}

// rateTotals are the run-wide counters the search compares period to
// period.
type rateTotals struct {
	at                  time.Time
	sent, acked, failed int64
	received            int64
	backlog             int64 // per subscription
}

func (c *coordinator) rateTotals(cs []protocol.CountersResponse) rateTotals {
	t := rateTotals{at: time.Now()}
	acked := map[string]int64{}
	unique := map[SubscriptionRef]int64{}
	for _, cr := range cs {
		for _, p := range cr.Producers {
			t.sent += p.Sent
			t.acked += p.Acked
			t.failed += p.Failed
			acked[p.Topic] += p.Acked
		}
		for _, s := range cr.Subscriptions {
			t.received += s.Received
			unique[SubscriptionRef{Topic: s.Topic, Name: s.Subscription, CatchUp: s.CatchUp}] += s.Unique
		}
	}
	if n := int64(len(c.plan.Subscriptions)); n > 0 {
		var b int64
		for _, s := range c.plan.Subscriptions {
			b += max(acked[s.Topic]-unique[s], 0)
		}
		t.backlog = b / n
	}
	return t
}

// searchRate runs the max-rate search: every period it reads the workers'
// counters, tells the controller what it saw and sets the rate it answers,
// until the controller is done (bounded by its MaxPeriods).
func (c *coordinator) searchRate(ctx context.Context, initial float64) (float64, *results.RateSearch, error) {
	cfg := c.o.RateSearch.Config
	cfg.Initial = initial
	if cfg.Hold <= 0 {
		cfg.Hold = workload.RateHold(c.wl, c.o.Driver.System)
	}
	if cfg.MaxLatency <= 0 {
		cfg.MaxLatency = workload.RateMaxP99Latency(c.wl)
	}
	if cfg.MaxPeriods <= 0 {
		cfg.MaxPeriods = workload.RateSearchPeriods(cfg.Hold)
	}
	period := c.o.RateSearch.Period
	if period <= 0 {
		period = workload.RateSearchPeriod
	}
	s, err := NewMaxRateSearch(cfg)
	if err != nil {
		return 0, nil, err
	}
	if s.Rate() != initial {
		if err := c.setRate(ctx, s.Rate()); err != nil {
			return 0, nil, err
		}
	}
	subsPerTopic := c.subsPerTopic()
	cs, err := c.counters(ctx)
	if err != nil {
		return 0, nil, err
	}
	prev := c.rateTotals(cs)
	// While the search holds a rate, every period ends with a cut of the
	// workers' intervals, so the snapshots collected since the last cut
	// are exactly the period's, and their latency is its latency.
	holding, mark, heldLogged := false, 0, 0
	for {
		if err := sleep(ctx, period); err != nil {
			r := s.Result()
			return 0, &r, err
		}
		var latency *stats.Histogram
		if holding {
			if latency, mark, err = c.cutLatency(ctx, mark); err != nil {
				r := s.Result()
				return 0, &r, err
			}
		}
		cs, err := c.counters(ctx)
		if err != nil {
			r := s.Result()
			return 0, &r, err
		}
		cur := c.rateTotals(cs)
		el := cur.at.Sub(prev.at)
		obs := RateObservation{
			Elapsed:       el,
			PublishRate:   float64(cur.acked-prev.acked) / el.Seconds(),
			Backlog:       cur.backlog,
			Pending:       cur.sent - cur.acked - cur.failed,
			PublishErrors: cur.failed - prev.failed,
			Latency:       latency,
		}
		if subsPerTopic > 0 {
			obs.ConsumeRate = float64(cur.received-prev.received) / el.Seconds() / subsPerTopic
		}
		prev = cur
		before := s.Rate()
		next, done := s.Observe(obs)
		c.logf("rate search: target %.0f msg/s, published %.0f msg/s, pending %d, backlog %d -> %.0f msg/s",
			before, obs.PublishRate, obs.Pending, obs.Backlog, next)
		for _, h := range s.holds[heldLogged:] {
			c.logf("rate search: held %.0f msg/s for %.0f s: published %.0f msg/s, corrected p99 %.1f ms: %s %s",
				h.TargetMsgPerSec, h.Seconds, h.PublishMsgPerSec, h.CorrectedP99Ms, h.Verdict, h.Reason)
			heldLogged++
		}
		if done {
			r := s.Result()
			if !r.Converged {
				c.res.Notes = append(c.res.Notes, fmt.Sprintf("max-rate search did not converge within %d periods; measuring at the highest rate held (%.0f msg/s)", len(r.Steps), next))
			}
			c.logf("rate search: found %.0f msg/s (converged %v)", next, r.Converged)
			return next, &r, nil
		}
		if next < before {
			// The rate that fell behind left a queue in the clients; a
			// lower rate judged on top of it would look behind too (and
			// the found rate would be measured with seconds of queueing).
			// Let the queue drain, publishing nothing, before trying it.
			if err := c.drainPending(ctx); err != nil {
				r := s.Result()
				return 0, &r, err
			}
			cs, err := c.counters(ctx)
			if err != nil {
				r := s.Result()
				return 0, &r, err
			}
			prev = c.rateTotals(cs)
		}
		if next != before {
			if err := c.setRate(ctx, next); err != nil {
				r := s.Result()
				return 0, &r, err
			}
		}
		if s.Holding() && !holding {
			// The hold's first period starts now: cut here.
			if mark, err = c.cut(ctx); err != nil {
				r := s.Result()
				return 0, &r, err
			}
		}
		holding = s.Holding()
	}
}

// cut closes every worker's interval and returns how many snapshots are
// collected: the mark after which the next period's snapshots come.
func (c *coordinator) cut(ctx context.Context) (int, error) {
	if err := c.collect(ctx, true); err != nil {
		return 0, fmt.Errorf("reading the hold's latency: %w", err)
	}
	// The workers restarted their tickers: the collector's next poll
	// moves with them.
	c.kickCollector()
	c.collMu.Lock()
	defer c.collMu.Unlock()
	return len(c.snaps), nil
}

// cutLatency cuts, and returns the corrected publish latency of the
// rate-search snapshots collected after the first mark ones (the period
// since the last cut), and the new mark.
func (c *coordinator) cutLatency(ctx context.Context, mark int) (*stats.Histogram, int, error) {
	next, err := c.cut(ctx)
	if err != nil {
		return nil, mark, err
	}
	c.collMu.Lock()
	defer c.collMu.Unlock()
	h := stats.NewHistogram()
	for _, sn := range c.snaps[min(mark, next):next] {
		if sn.Phase == stats.PhaseRateSearch {
			h.Merge(sn.Producer.CorrectedLatency)
		}
	}
	return h, next, nil
}

// drainPending stops publishing until every message in flight is
// acknowledged (bounded by a minute; a slower drain is logged and the
// search goes on).
func (c *coordinator) drainPending(ctx context.Context) error {
	if err := c.setRate(ctx, 0); err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		cs, err := c.counters(ctx)
		if err != nil {
			return err
		}
		t := c.rateTotals(cs)
		pending := t.sent - t.acked - t.failed
		if pending == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			c.logf("rate search: %d messages still in flight after a minute without publishing; going on", pending)
			return nil
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// judgeMeasuredRate records whether the rate the search found held
// through the measured phase, with a note when it did not.
func (c *coordinator) judgeMeasuredRate() {
	rs := c.res.RateSearch
	if rs == nil {
		return
	}
	subsPerTopic := c.subsPerTopic()
	rs.Measured = measuredHold(c.res.MeasuredRate, c.snaps, subsPerTopic, c.o.RateSearch.Config.withDefaults().Slack, rs.MaxP99LatencyMs)
	if m := rs.Measured; m != nil && !m.Held {
		c.res.Notes = append(c.res.Notes, fmt.Sprintf("the rate the search found (%.0f msg/s) did not hold through the measured phase: %s", m.TargetMsgPerSec, m.Reason))
	}
}

// subsPerTopic is how many subscriptions read each topic (0 for none):
// what the consumers read is divided by it to compare with what the
// producers published.
func (c *coordinator) subsPerTopic() float64 {
	if n := len(c.plan.Subscriptions); n > 0 {
		return float64(n) / float64(c.wl.Topics)
	}
	return 0
}
