package coordinator

import (
	"sync"
	"time"

	"github.com/streambench/streambench-operator/internal/stats"
)

// Progress is the run's state after one stats interval, for a live display
// (Options.Progress; local mode prints it every 10 s).
type Progress struct {
	// Phase and Index name the interval the rates and latencies are of.
	Phase stats.Phase
	Index int
	// Elapsed is the time since the load started.
	Elapsed time.Duration
	// Remaining is the time until the measured phase ends, or -1 while it
	// cannot be known: a rate search, backlog build or drain runs until it
	// is done, and the measured phase only starts after it.
	Remaining time.Duration
	// Rates over all workers in the interval; MB is 10^6 bytes, as in the
	// results.
	PublishMsgPerSec float64
	PublishMBPerSec  float64
	ConsumeMsgPerSec float64
	ConsumeMBPerSec  float64
	// PublishP99Ms is the interval's publish latency (ack - send) p99;
	// EndToEndP99Ms the tailing subscriptions' end-to-end p99. 0 when the
	// interval had no sample.
	PublishP99Ms  float64
	EndToEndP99Ms float64
	// Workers is how many workers' snapshots the interval merges.
	Workers int
}

// progressTracker turns the snapshots of each poll into Progress reports.
// A worker's snapshot of an interval may arrive one poll after another
// worker's (their tickers and the collector's are not in step), and a
// half-merged interval would show a producer worker's rate with no consumer
// beside it; so an interval is reported only once every worker has
// delivered it, and at most the newest such interval per poll.
type progressTracker struct {
	mu         sync.Mutex
	workers    int
	pending    map[progressKey][]stats.Snapshot
	order      []progressKey
	loadStart  time.Time
	measureEnd time.Time // zero while unknown
}

type progressKey struct {
	phase stats.Phase
	index int
}

func newProgressTracker(workers int) *progressTracker {
	return &progressTracker{workers: workers, pending: map[progressKey][]stats.Snapshot{}}
}

// started records when the load started and, when already known, when the
// measured phase will end.
func (p *progressTracker) started(at, measureEnd time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.loadStart, p.measureEnd = at, measureEnd
}

// measuring records that the measured phase started now and lasts d.
func (p *progressTracker) measuring(now time.Time, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.measureEnd = now.Add(d)
}

// add takes the snapshots of one poll and returns the report of the newest
// interval that every worker has now delivered, if any. Older incomplete
// intervals are dropped then: a worker that missed one will not send it
// later.
func (p *progressTracker) add(fresh []stats.Snapshot, now time.Time) (Progress, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range fresh {
		k := progressKey{s.Phase, s.Index}
		if _, ok := p.pending[k]; !ok {
			p.order = append(p.order, k)
		}
		p.pending[k] = append(p.pending[k], s)
	}
	newest := -1
	for i, k := range p.order {
		if len(p.pending[k]) >= p.workers {
			newest = i
		}
	}
	if newest < 0 {
		return Progress{}, false
	}
	k := p.order[newest]
	m := stats.Merge(p.pending[k]...)
	for _, old := range p.order[:newest+1] {
		delete(p.pending, old)
	}
	p.order = append([]progressKey(nil), p.order[newest+1:]...)
	// The interval before the load starts (the second between the start
	// command and the start) holds nothing and would show as a stall; it
	// ends at the start, give or take the phase command's round trip.
	if !p.loadStart.IsZero() && m.End.Before(p.loadStart.Add(time.Second)) {
		return Progress{}, false
	}

	total := m.Consumer.Total()
	pr := Progress{
		Phase: k.phase, Index: k.index, Workers: m.Workers,
		Remaining:        -1,
		PublishMsgPerSec: m.Rate(m.Producer.Acked),
		PublishMBPerSec:  m.Rate(m.Producer.AckedBytes) / 1e6,
		ConsumeMsgPerSec: m.Rate(total.Received),
		ConsumeMBPerSec:  m.Rate(total.ReceivedBytes) / 1e6,
		PublishP99Ms:     float64(m.Producer.PublishLatency.ValueAtPercentile(99)) / 1000,
		EndToEndP99Ms:    float64(m.Consumer.EndToEnd.ValueAtPercentile(99)) / 1000,
	}
	if !p.loadStart.IsZero() {
		pr.Elapsed = max(now.Sub(p.loadStart), 0)
	}
	if !p.measureEnd.IsZero() {
		pr.Remaining = max(p.measureEnd.Sub(now), 0)
	}
	return pr, true
}
