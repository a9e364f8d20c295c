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
				if c.o.OnSnapshot != nil {
					c.o.OnSnapshot(s)
				}
			}
		}
	}
	return err
}

// maxMissedIntervals is how many stats reads in a row may fail (each
// retried by the client) before the run is ended.
const maxMissedIntervals = 3

// startCollector polls the workers' snapshots once per interval and logs
// a line per interval, until the returned stop is called.
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
		t := time.NewTicker(c.o.SnapshotInterval)
		defer t.Stop()
		missed := 0
		for {
			select {
			case <-cctx.Done():
				return
			case <-t.C:
				c.collMu.Lock()
				n := len(c.snaps)
				c.collMu.Unlock()
				if err := c.collect(cctx, false); err != nil {
					if cctx.Err() != nil {
						return
					}
					if missed++; missed >= maxMissedIntervals {
						abort(fmt.Errorf("the workers' stats could not be read %d intervals in a row, a worker is gone: %w", missed, err))
						return
					}
					c.logf("reading stats: %v (retried at the next interval)", err)
					continue
				}
				missed = 0
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
