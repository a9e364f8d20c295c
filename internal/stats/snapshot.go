package stats

import (
	"sort"
	"time"
)

// Phase labels what the load was doing during an interval. Only PhaseMeasure
// (and, for backlog workloads, PhaseDrain) feed the headline numbers; warm-up
// is discarded, as in OMB.
type Phase string

const (
	// PhaseWarmup is the discarded warm-up.
	PhaseWarmup Phase = "warmup"
	// PhaseRateSearch is the max-rate search (producerRate: 0), before the
	// measured phase runs at the rate it found.
	PhaseRateSearch Phase = "rate-search"
	// PhaseBacklogBuild is publishing with (catch-up) consumers paused.
	PhaseBacklogBuild Phase = "backlog-build"
	// PhaseDrain is the catch-up read of the backlog.
	PhaseDrain Phase = "drain"
	// PhaseMeasure is the measured phase.
	PhaseMeasure Phase = "measure"
)

// Producer is what the producers of one worker did in one interval.
type Producer struct {
	// Sent is messages handed to the client (Send called).
	Sent      int64 `json:"sent"`
	SentBytes int64 `json:"sentBytes"`
	// Acked is messages the broker acknowledged.
	Acked      int64 `json:"acked"`
	AckedBytes int64 `json:"ackedBytes"`
	// PublishErrors is messages whose send failed.
	PublishErrors int64 `json:"publishErrors"`
	// PublishLatency is ack - send (µs), of acked messages.
	PublishLatency *Histogram `json:"publishLatencyUs"`
	// SendDelay is send - intended send (µs): how late the load generator
	// was against its schedule (OMB's "publish delay").
	SendDelay *Histogram `json:"sendDelayUs"`
	// CorrectedLatency is ack - intended send (µs): publish latency free of
	// coordinated omission.
	CorrectedLatency *Histogram `json:"correctedLatencyUs"`
	// SeqEnds is, per producer ID, the producer's next sequence number
	// when the interval closed: the sends of the interval are the
	// sequence numbers from the previous interval's end to this one (read
	// without stopping the senders, so a send at the cut may fall on
	// either side). The delivery record places what was lost in time by
	// it. In a merge, the highest of each producer.
	SeqEnds map[uint32]uint64 `json:"seqEnds,omitempty"`
}

// SeqRange is one producer's sequence numbers From to To, To excluded.
type SeqRange struct{ From, To uint64 }

// Len is how many sequence numbers the range holds.
func (r SeqRange) Len() uint64 { return r.To - r.From }

// CountIn is how many of the ranges' sequence numbers lie in [from, to),
// each range counted on its own (two ranges that overlap count twice: a
// message lost on two subscriptions is two losses). Pure.
func CountIn(ranges []SeqRange, from, to uint64) int64 {
	var n int64
	for _, r := range ranges {
		if lo, hi := max(r.From, from), min(r.To, to); lo < hi {
			n += int64(hi - lo)
		}
	}
	return n
}

// Subscription is what the consumers of one subscription on one worker
// received in one interval.
type Subscription struct {
	// CatchUp marks a subscription of the mixed workload's catch-up side,
	// whose end-to-end latency is kept apart (it reads an old backlog).
	CatchUp bool `json:"catchUp,omitempty"`
	// Received is messages delivered, duplicates included.
	Received      int64 `json:"received"`
	ReceivedBytes int64 `json:"receivedBytes"`
	// Duplicates is messages delivered more than once (the load generator
	// decides how it detects them).
	Duplicates int64 `json:"duplicates,omitempty"`
	// Lost is messages the load generator found missing (e.g. a gap in a
	// per-producer sequence).
	Lost int64 `json:"lost,omitempty"`
}

// Consumer is what the consumers of one worker did in one interval.
type Consumer struct {
	// EndToEnd is receive - send timestamp in the payload (µs), of the
	// tailing subscriptions.
	EndToEnd *Histogram `json:"endToEndUs"`
	// CatchUpEndToEnd is the same for the catch-up subscriptions.
	CatchUpEndToEnd *Histogram `json:"catchUpEndToEndUs"`
	// Subscriptions are keyed by subscription name.
	Subscriptions map[string]Subscription `json:"subscriptions,omitempty"`
}

// Totals sums the subscriptions; catchUp selects which side (see
// Subscription.CatchUp). Use Total for both sides.
func (c Consumer) Totals(catchUp bool) Subscription {
	t := Subscription{CatchUp: catchUp}
	for _, s := range c.Subscriptions {
		if s.CatchUp == catchUp {
			t.add(s)
		}
	}
	return t
}

// Total sums every subscription.
func (c Consumer) Total() Subscription {
	var t Subscription
	for _, s := range c.Subscriptions {
		t.add(s)
	}
	return t
}

func (s *Subscription) add(o Subscription) {
	s.Received += o.Received
	s.ReceivedBytes += o.ReceivedBytes
	s.Duplicates += o.Duplicates
	s.Lost += o.Lost
}

// Snapshot is the measurements of one interval (10 s by default) of one
// worker, or the merge of several (see Merge). It is JSON-serialisable with
// its histograms as HdrHistogram V2 compressed base64.
type Snapshot struct {
	// Seq numbers a worker's snapshots from 1; Store sets it.
	Seq uint64 `json:"seq"`
	// Worker names the worker; empty in a merge of several workers.
	Worker string `json:"worker,omitempty"`
	// Workers is how many distinct workers a merge covers (1 for a worker's
	// own snapshot).
	Workers int `json:"workers"`
	// Phase is the phase of the interval; empty in a merge of several phases.
	Phase Phase `json:"phase"`
	// Index numbers the intervals of a phase on a worker from 0. Workers
	// start phases together (on the coordinator's command), so the same
	// Index is the same stretch of time on every worker; Series merges by it.
	Index int `json:"index"`
	// Start and End are the worker's wall clock at the interval's ends.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Elapsed is the interval's length on the worker's monotonic clock;
	// rates divide by it (wall clocks of different pods may disagree).
	// In a merge: per worker the sum of its intervals, then the longest of
	// those over workers — the length of time the merged counts were
	// collected in (see Merge for why not the mean).
	Elapsed time.Duration `json:"elapsedNanos"`

	Producer Producer `json:"producer"`
	Consumer Consumer `json:"consumer"`
}

// Seconds is Elapsed in seconds.
func (s Snapshot) Seconds() float64 { return s.Elapsed.Seconds() }

// Rate is n per second of Elapsed; 0 when Elapsed is 0.
func (s Snapshot) Rate(n int64) float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(n) / s.Elapsed.Seconds()
}

// Merge combines snapshots into one: counters are summed, histograms merged
// exactly (the merged histogram is the histogram of all samples), Start is
// the earliest, End the latest, and Elapsed is, per worker, the sum of its
// snapshots, then the longest of those (so merging the same interval of N
// workers keeps ~10 s, and merging a worker's 6 intervals gives ~60 s).
// The longest, not the mean: a worker that saw only a sliver of the phase
// (one cut at a boundary, or intervals it could not deliver) must not
// shorten the phase — with the mean, one such worker beside a full one
// halved Elapsed and doubled every rate.
// Phase is kept when all agree, else empty; Index is the first snapshot's.
// The inputs are not modified.
func Merge(snaps ...Snapshot) Snapshot {
	out := Snapshot{
		Producer: Producer{PublishLatency: NewHistogram(), SendDelay: NewHistogram(), CorrectedLatency: NewHistogram()},
		Consumer: Consumer{EndToEnd: NewHistogram(), CatchUpEndToEnd: NewHistogram()},
	}
	if len(snaps) == 0 {
		return out
	}
	perWorker := map[string]time.Duration{}
	out.Phase, out.Index, out.Worker = snaps[0].Phase, snaps[0].Index, snaps[0].Worker
	for i, s := range snaps {
		if s.Phase != out.Phase {
			out.Phase = ""
		}
		if s.Worker != out.Worker {
			out.Worker = ""
		}
		if i == 0 || (!s.Start.IsZero() && s.Start.Before(out.Start)) {
			out.Start = s.Start
		}
		if s.End.After(out.End) {
			out.End = s.End
		}
		perWorker[s.Worker] += s.Elapsed
		if s.Seq > out.Seq {
			out.Seq = s.Seq
		}

		p := &out.Producer
		p.Sent += s.Producer.Sent
		p.SentBytes += s.Producer.SentBytes
		p.Acked += s.Producer.Acked
		p.AckedBytes += s.Producer.AckedBytes
		p.PublishErrors += s.Producer.PublishErrors
		p.PublishLatency.Merge(s.Producer.PublishLatency)
		p.SendDelay.Merge(s.Producer.SendDelay)
		p.CorrectedLatency.Merge(s.Producer.CorrectedLatency)
		for id, end := range s.Producer.SeqEnds {
			if p.SeqEnds == nil {
				p.SeqEnds = map[uint32]uint64{}
			}
			p.SeqEnds[id] = max(p.SeqEnds[id], end)
		}

		c := &out.Consumer
		c.EndToEnd.Merge(s.Consumer.EndToEnd)
		c.CatchUpEndToEnd.Merge(s.Consumer.CatchUpEndToEnd)
		for name, sub := range s.Consumer.Subscriptions {
			if c.Subscriptions == nil {
				c.Subscriptions = map[string]Subscription{}
			}
			m := c.Subscriptions[name]
			m.CatchUp = m.CatchUp || sub.CatchUp
			m.add(sub)
			c.Subscriptions[name] = m
		}
	}
	for _, d := range perWorker {
		out.Elapsed = max(out.Elapsed, d)
	}
	out.Workers = len(perWorker)
	return out
}

// Aggregate is the whole-run aggregate of one phase: the Merge of every
// snapshot with that phase (of every worker).
func Aggregate(snaps []Snapshot, phase Phase) Snapshot {
	return Merge(OfPhase(snaps, phase)...)
}

// OfPhase selects the snapshots of one phase, in their order.
func OfPhase(snaps []Snapshot, phase Phase) []Snapshot {
	var out []Snapshot
	for _, s := range snaps {
		if s.Phase == phase {
			out = append(out, s)
		}
	}
	return out
}

// Series is the time series of one phase: for each interval Index, the
// Merge of that interval over all workers, in Index order. (OMB's per-10 s
// lists are this series.)
func Series(snaps []Snapshot, phase Phase) []Snapshot {
	byIndex := map[int][]Snapshot{}
	for _, s := range OfPhase(snaps, phase) {
		byIndex[s.Index] = append(byIndex[s.Index], s)
	}
	idx := make([]int, 0, len(byIndex))
	for i := range byIndex {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	out := make([]Snapshot, 0, len(idx))
	for _, i := range idx {
		out = append(out, Merge(byIndex[i]...))
	}
	return out
}

// Phases lists the phases present, in order of first appearance.
func Phases(snaps []Snapshot) []Phase {
	seen := map[Phase]bool{}
	var out []Phase
	for _, s := range snaps {
		if !seen[s.Phase] {
			seen[s.Phase] = true
			out = append(out, s.Phase)
		}
	}
	return out
}
