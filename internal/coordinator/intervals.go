package coordinator

import (
	"sort"
	"time"

	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
)

// pollGrace is how long after the workers' interval boundary the collector
// polls: a worker closes its interval on its own ticker, a few
// milliseconds of scheduling after the boundary on a busy host. A worker
// that has not closed it yet is polled again (followUps).
const pollGrace = 100 * time.Millisecond

// followUps are the waits before each renewed poll of the workers that
// have not delivered an interval others have: the first ones short, as a
// late tick is a matter of milliseconds, then longer, so a worker that
// will never deliver it (one whose tick fell just before a phase change
// made it an interval of its own) costs a handful of calls, not one per
// 100 ms until the next boundary.
var followUps = []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond,
	400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond}

// intervalKey names one interval on every worker: workers start phases
// together, so the same phase and index is the same stretch of time.
type intervalKey struct {
	phase stats.Phase
	index int
}

// IntervalMerge is one interval that every worker delivered.
type IntervalMerge struct {
	Phase stats.Phase
	Index int
	// End is when the interval's last worker closed it, on the
	// coordinator's clock.
	End time.Time
	// Lag is how long after End the coordinator held every worker's
	// snapshot of it: live progress, /metrics and the periodic results
	// trail the workers by this much.
	Lag time.Duration
	// Merged is the interval merged over the workers.
	Merged stats.Snapshot
}

type pendingInterval struct {
	from  map[int]bool
	snaps []stats.Snapshot
	end   time.Time
}

// intervalTracker follows each interval until every worker has delivered
// its snapshot of it. It tells when an interval was merged and with what
// lag, which workers still owe one others have delivered (polled again at
// once, not an interval later), and where the workers' next interval
// boundary falls, so the collector polls just after it: polled on a
// ticker of its own, unaligned with the workers' (which restart at every
// phase change), the coordinator merged each interval up to a whole
// interval late, and a worker whose tick fell a little after the poll
// then slipped to the next one, past the interval.
type intervalTracker struct {
	workers  int
	interval time.Duration
	pending  map[intervalKey]*pendingInterval
	// boundary is the latest interval end seen (coordinator's clock):
	// the workers close their next interval an interval after it.
	boundary   time.Time
	merges     int
	late       int
	incomplete int
	maxLag     time.Duration
	sumLag     time.Duration
}

func newIntervalTracker(workers int, interval time.Duration) *intervalTracker {
	return &intervalTracker{workers: workers, interval: interval, pending: map[intervalKey]*pendingInterval{}}
}

// add takes worker's new snapshots; offset is the worker's clock minus the
// coordinator's, so its ends are placed on the coordinator's clock.
func (t *intervalTracker) add(worker int, snaps []stats.Snapshot, offset time.Duration) {
	for _, s := range snaps {
		k := intervalKey{s.Phase, s.Index}
		p := t.pending[k]
		if p == nil {
			p = &pendingInterval{from: map[int]bool{}}
			t.pending[k] = p
		}
		if p.from[worker] {
			continue
		}
		p.from[worker] = true
		p.snaps = append(p.snaps, s)
		end := s.End.Add(-offset)
		if end.After(p.end) {
			p.end = end
		}
		if end.After(t.boundary) {
			t.boundary = end
		}
	}
}

// complete returns the intervals every worker has now delivered, oldest
// first, merged at now. An interval still incomplete that ended before
// one of them will not be completed (a worker that skipped it does not
// send it later): it is dropped and counted.
func (t *intervalTracker) complete(now time.Time) []IntervalMerge {
	var out []IntervalMerge
	for k, p := range t.pending {
		if len(p.from) < t.workers {
			continue
		}
		lag := max(now.Sub(p.end), 0)
		m := stats.Merge(p.snaps...)
		out = append(out, IntervalMerge{Phase: k.phase, Index: k.index, End: p.end, Lag: lag, Merged: m})
		delete(t.pending, k)
		t.merges++
		t.sumLag += lag
		t.maxLag = max(t.maxLag, lag)
		if lag > t.interval {
			t.late++
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].End.Before(out[j].End) })
	if len(out) > 0 {
		newest := out[len(out)-1].End
		for k, p := range t.pending {
			if p.end.Before(newest) {
				delete(t.pending, k)
				t.incomplete++
			}
		}
	}
	return out
}

// missing lists the workers that have not delivered an interval some
// other worker has.
func (t *intervalTracker) missing() []int {
	owe := map[int]bool{}
	for _, p := range t.pending {
		for w := 0; w < t.workers; w++ {
			if !p.from[w] {
				owe[w] = true
			}
		}
	}
	out := make([]int, 0, len(owe))
	for w := range owe {
		out = append(out, w)
	}
	sort.Ints(out)
	return out
}

// nextPoll is when the collector polls next after now: pollGrace after the
// workers' next interval boundary, or an interval from now before any
// boundary is known.
func (t *intervalTracker) nextPoll(now time.Time) time.Time {
	if t.boundary.IsZero() {
		return now.Add(t.interval)
	}
	next := t.boundary.Add(t.interval + pollGrace)
	if !next.After(now) {
		// Boundaries passed without a poll (a slow poll, a stall):
		// the first one still ahead.
		n := now.Sub(next)/t.interval + 1
		next = next.Add(n * t.interval)
	}
	return next
}

// summary is the run's record of its merges.
func (t *intervalTracker) summary() *results.Collection {
	c := &results.Collection{
		IntervalSeconds: t.interval.Seconds(), Workers: t.workers,
		Merged: t.merges, Late: t.late, Incomplete: t.incomplete,
		MaxMergeLagSeconds: t.maxLag.Seconds(),
	}
	if t.merges > 0 {
		c.MeanMergeLagSeconds = (t.sumLag / time.Duration(t.merges)).Seconds()
	}
	return c
}
