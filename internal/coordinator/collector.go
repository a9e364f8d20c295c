package coordinator

import (
	"context"
	"fmt"
	"time"

	"github.com/streambench/streambench-operator/internal/protocol"
	"github.com/streambench/streambench-operator/internal/stats"
)

// collect fetches every worker's new snapshots; cut closes the current
// interval first (the final read).
func (c *coordinator) collect(ctx context.Context, cut bool) error {
	return c.collectFrom(ctx, c.all(), cut)
}

// collectFrom fetches the new snapshots of the workers idx, and logs each
// interval that every worker has now delivered.
func (c *coordinator) collectFrom(ctx context.Context, idx []int, cut bool) error {
	c.collMu.Lock()
	defer c.collMu.Unlock()
	got := make([][]stats.Snapshot, len(c.clients))
	err := each(idx, func(i int) error {
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
		var fresh []stats.Snapshot
		for _, s := range snaps {
			if s.Seq > c.lastSeq[i] {
				c.snaps = append(c.snaps, s)
				fresh = append(fresh, s)
				c.lastSeq[i] = s.Seq
				if c.o.OnSnapshot != nil {
					c.o.OnSnapshot(s)
				}
			}
		}
		c.intervals.add(i, fresh, c.clockOffset(i))
	}
	c.logIntervals(c.intervals.complete(time.Now()))
	return err
}

// clockOffset is worker i's clock minus the coordinator's (0 before it is
// measured).
func (c *coordinator) clockOffset(i int) time.Duration {
	if i < len(c.res.ClockOffsets) {
		return time.Duration(c.res.ClockOffsets[i].OffsetMicros) * time.Microsecond
	}
	return 0
}

// kickCollector makes the collector poll now: the workers just closed an
// interval on the coordinator's command (a phase change, a cut), and their
// next boundaries are an interval from now.
func (c *coordinator) kickCollector() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// maxMissedIntervals is how many stats reads in a row may fail (each
// retried by the client) before the run is ended.
const maxMissedIntervals = 3

// startCollector polls the workers' snapshots just after each interval
// boundary and logs a line per interval, until the returned stop is
// called. A worker that has not delivered an interval the others have is
// polled again shortly (followUps), alone.
//
// A worker that does not answer for maxMissedIntervals intervals in a row
// is gone (its pod deleted, evicted, killed): the run cannot end well, so
// abort ends it at once with the reason, instead of at the end of a long
// measured phase.
func (c *coordinator) startCollector(ctx context.Context, abort context.CancelCauseFunc) (stop func()) {
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The first poll at once: the workers closed an interval when
		// the load was scheduled, and its end is their first boundary.
		t := time.NewTimer(0)
		defer t.Stop()
		missed, round := 0, 0
		var wanted []int // nil: every worker, a regular poll
		// The results so far are written about once per interval, not
		// after every poll: a command's cut (kick) and the first poll add
		// no interval worth a write.
		lastCheckpoint := time.Now()
		for {
			select {
			case <-cctx.Done():
				return
			case <-c.kick:
				wanted = nil
			case <-t.C:
			}
			regular := wanted == nil
			if regular {
				wanted, round = c.all(), 0
			}
			c.collMu.Lock()
			n := len(c.snaps)
			c.collMu.Unlock()
			err := c.collectFrom(cctx, wanted, false)
			wanted = nil
			if err != nil {
				if cctx.Err() != nil {
					return
				}
				if regular {
					if missed++; missed >= maxMissedIntervals {
						abort(fmt.Errorf("the workers' stats could not be read %d intervals in a row, a worker is gone: %w", missed, err))
						return
					}
					c.logf("reading stats: %v (retried at the next interval)", err)
				}
				t.Reset(time.Until(c.nextPoll()))
				continue
			}
			if regular {
				missed = 0
			}
			c.reportProgress(n)
			next := c.nextPoll()
			c.collMu.Lock()
			owe := c.intervals.missing()
			c.collMu.Unlock()
			if len(owe) > 0 && round < len(followUps) && time.Now().Add(followUps[round]).Before(next) {
				wanted = owe
				t.Reset(followUps[round])
				round++
				continue
			}
			if time.Since(lastCheckpoint) >= c.o.SnapshotInterval*9/10 {
				c.checkpoint()
				lastCheckpoint = time.Now()
			}
			t.Reset(time.Until(next))
		}
	}()
	return func() { cancel(); <-done }
}

func (c *coordinator) nextPoll() time.Time {
	c.collMu.Lock()
	defer c.collMu.Unlock()
	return c.intervals.nextPoll(time.Now())
}

// logIntervals logs a line per interval merged over every worker, with how
// long after its end the coordinator had it.
func (c *coordinator) logIntervals(merged []IntervalMerge) {
	for _, im := range merged {
		m := im.Merged
		pub := m.Producer.PublishLatency.Quantiles()
		e2e := m.Consumer.EndToEnd.Quantiles()
		c.logf("%-13s #%-3d pub %8.0f msg/s  cons %8.0f msg/s  pub p50 %6.2f ms p99 %7.2f ms  e2e p50 %7.2f ms p99 %8.2f ms  (%d workers, merged %.3f s after its end)",
			im.Phase, im.Index, m.Rate(m.Producer.Acked), m.Rate(m.Consumer.Total().Received),
			float64(pub.P50)/1000, float64(pub.P99)/1000, float64(e2e.P50)/1000, float64(e2e.P99)/1000, m.Workers, im.Lag.Seconds())
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
