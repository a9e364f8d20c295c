package stats

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// kind indexes the Recorder's histograms.
type kind int

const (
	kindPublish kind = iota
	kindSendDelay
	kindCorrected
	kindEndToEnd
	kindCatchUpEndToEnd
	numKinds
)

// dense is one hot-path histogram with its clamp counters.
type dense struct {
	h                  *hdr.Histogram // allocated on first record
	overflow, negative int64
}

func (d *dense) record(v int64) {
	if d.h == nil {
		d.h = newDense()
	}
	v, over, neg := clamp(v)
	if over {
		d.overflow++
	}
	if neg {
		d.negative++
	}
	_ = d.h.RecordValue(v) // in range by clamp
}

// shard is one lock's worth of Recorder state. hdrhistogram-go is not safe
// for concurrent use, and ack callbacks run on the clients' goroutines (not
// ours), so goroutines cannot own histograms; instead each call picks a
// random shard, which keeps lock contention low without goroutine identity.
// Measured on the 2-core build machine (go test -bench Ack): ~80-170 ns per
// RecordAck sharded vs ~90-100 ns behind one mutex, so sharding costs
// nothing at 2 cores and keeps many-core workers off a single lock; a
// per-processor shard handed out through sync.Pool measured 175-385 ns.
type shard struct {
	mu                              sync.Mutex
	h                               [numKinds]dense
	sent, sentBytes                 int64
	acked, ackedBytes, publishError int64
	_                               [64]byte // keep neighbouring shards' locks off one cache line
}

// Recorder collects the measurements of one worker. Every method is safe for
// concurrent use by any number of goroutines and cheap enough for the send
// path and the clients' ack and receive callbacks (see BenchmarkRecorder*).
// Cut closes the current interval into a Snapshot; nothing recorded is ever
// lost between intervals.
type Recorder struct {
	worker string
	shards []shard
	mask   uint32

	mu    sync.Mutex // serialises Cut, Subscription and OwnShard
	own   []*shard   // the OwnShards
	phase Phase
	index int
	start time.Time
	subs  map[string]*SubscriptionRecorder
}

// NewRecorder starts recording the first interval of phase at now, for the
// named worker.
func NewRecorder(worker string, phase Phase, now time.Time) *Recorder {
	n := 1
	for n < runtime.GOMAXPROCS(0) && n < 64 {
		n <<= 1
	}
	// Twice the processors: two callbacks that land on one shard at the same
	// time are then rarer than one in 2*GOMAXPROCS.
	n <<= 1
	return &Recorder{
		worker: worker, shards: make([]shard, n), mask: uint32(n - 1),
		phase: phase, start: now, subs: map[string]*SubscriptionRecorder{},
	}
}

func (r *Recorder) shard() *shard {
	// math/rand/v2's top-level functions use the runtime's per-thread
	// generator: no shared state, so no contention in choosing.
	return &r.shards[rand.Uint32()&r.mask]
}

// Worker is the worker name given to NewRecorder.
func (r *Recorder) Worker() string { return r.worker }

// Phase is the phase of the current interval.
func (r *Recorder) Phase() Phase {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.phase
}

// RecordSend counts one message handed to the client at sent, which the
// schedule wanted sent at intended, and records the send delay
// (sent - intended).
func (r *Recorder) RecordSend(intended, sent time.Time, bytes int) {
	r.shard().recordSend(intended, sent, bytes)
}

func (s *shard) recordSend(intended, sent time.Time, bytes int) {
	s.mu.Lock()
	s.sent++
	s.sentBytes += int64(bytes)
	s.h[kindSendDelay].record(sent.Sub(intended).Microseconds())
	s.mu.Unlock()
}

// Shard is one of a Recorder's shards, for a caller that records from
// one goroutine, or from one client's callbacks, again and again: a random
// shard's lock and counters were last written by whichever goroutine drew
// it, often on the other core, so their lines moved between the cores at
// every record. A Shard's methods lock it like any other, so sharing one
// is safe, only slower.
type Shard struct{ s *shard }

// OwnShard returns a shard no one else records into, for one goroutine
// (the worker's senders, one of which keeps a core to itself on 2 cores):
// its lines stay in that core's cache. Cut collects it with the rest; it
// lives as long as the Recorder, so make one per goroutine, not per call.
func (r *Recorder) OwnShard() *Shard {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := new(shard)
	r.own = append(r.own, s)
	return &Shard{s: s}
}

// ShardFor returns the shared shard that key maps to, for callers that
// each record into one of a bounded set (a producer's acks, which its
// client's goroutine delivers): their values fall on fewer, warmer lines
// than random shards spread them over.
func (r *Recorder) ShardFor(key uint32) *Shard {
	return &Shard{s: &r.shards[key&r.mask]}
}

// RecordSend is Recorder.RecordSend into this shard.
func (s *Shard) RecordSend(intended, sent time.Time, bytes int) {
	s.s.recordSend(intended, sent, bytes)
}

// RecordAck is Recorder.RecordAck into this shard.
func (s *Shard) RecordAck(intended, sent, acked time.Time, bytes int) {
	s.s.recordAck(intended, sent, acked, bytes)
}

// RecordAck counts one acknowledged message and records its publish latency
// (acked - sent) and corrected publish latency (acked - intended).
func (r *Recorder) RecordAck(intended, sent, acked time.Time, bytes int) {
	r.shard().recordAck(intended, sent, acked, bytes)
}

func (s *shard) recordAck(intended, sent, acked time.Time, bytes int) {
	s.mu.Lock()
	s.acked++
	s.ackedBytes += int64(bytes)
	s.h[kindPublish].record(acked.Sub(sent).Microseconds())
	s.h[kindCorrected].record(acked.Sub(intended).Microseconds())
	s.mu.Unlock()
}

// RecordPublishError counts one message whose send failed.
func (r *Recorder) RecordPublishError() {
	s := r.shard()
	s.mu.Lock()
	s.publishError++
	s.mu.Unlock()
}

// Subscription returns the recorder of one subscription (created on first
// use; the same one for the same name). catchUp marks the mixed workload's
// catch-up subscriptions, whose end-to-end latency is kept apart; it is
// fixed by the first call for a name.
func (r *Recorder) Subscription(name string, catchUp bool) *SubscriptionRecorder {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.subs[name]; ok {
		return s
	}
	s := &SubscriptionRecorder{r: r, name: name, catchUp: catchUp}
	r.subs[name] = s
	return s
}

// SubscriptionRecorder records what the consumers of one subscription
// receive. Safe for concurrent use.
type SubscriptionRecorder struct {
	r       *Recorder
	name    string
	catchUp bool

	received, receivedBytes, duplicates, lost atomic.Int64
}

// RecordReceive counts one message received at received whose payload says
// it was sent at sentAt, and records the end-to-end latency
// (received - sentAt; negative values, from clock skew, are counted).
func (s *SubscriptionRecorder) RecordReceive(sentAt, received time.Time, bytes int) {
	s.received.Add(1)
	s.receivedBytes.Add(int64(bytes))
	k := kindEndToEnd
	if s.catchUp {
		k = kindCatchUpEndToEnd
	}
	sh := s.r.shard()
	sh.mu.Lock()
	sh.h[k].record(received.Sub(sentAt).Microseconds())
	sh.mu.Unlock()
}

// RecordDuplicates counts n messages delivered again (already received).
// Call it in addition to RecordReceive for the duplicate delivery.
func (s *SubscriptionRecorder) RecordDuplicates(n int64) { s.duplicates.Add(n) }

// RecordLost counts n messages found missing.
func (s *SubscriptionRecorder) RecordLost(n int64) { s.lost.Add(n) }

// Cut closes the current interval at now and returns it as a Snapshot (Seq
// unset: Store.Append numbers it); the next interval starts at now in the
// same phase. Call it every interval (10 s) from one goroutine.
func (r *Recorder) Cut(now time.Time) Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cutLocked(now, r.phase)
}

// CutPhase closes the current interval at now like Cut and starts phase
// next with interval Index 0 (or, if next is the current phase, simply
// continues it like Cut). Call it when the coordinator changes phase,
// and restart the interval ticker, so every worker's intervals of a phase
// line up by Index.
func (r *Recorder) CutPhase(now time.Time, next Phase) Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cutLocked(now, next)
}

func (r *Recorder) cutLocked(now time.Time, next Phase) Snapshot {
	snap := Snapshot{
		Worker: r.worker, Workers: 1, Phase: r.phase, Index: r.index,
		Start: r.start, End: now, Elapsed: now.Sub(r.start),
		Producer: Producer{PublishLatency: NewHistogram(), SendDelay: NewHistogram(), CorrectedLatency: NewHistogram()},
		Consumer: Consumer{EndToEnd: NewHistogram(), CatchUpEndToEnd: NewHistogram()},
	}
	targets := [numKinds]*Histogram{
		kindPublish: snap.Producer.PublishLatency, kindSendDelay: snap.Producer.SendDelay,
		kindCorrected: snap.Producer.CorrectedLatency,
		kindEndToEnd:  snap.Consumer.EndToEnd, kindCatchUpEndToEnd: snap.Consumer.CatchUpEndToEnd,
	}
	shards := make([]*shard, 0, len(r.shards)+len(r.own))
	for i := range r.shards {
		shards = append(shards, &r.shards[i])
	}
	shards = append(shards, r.own...)
	for _, s := range shards {
		// Moving a dense histogram into a sparse one and clearing it scans
		// ~21k counters (tens of µs); holding the shard that long every 10 s
		// is cheaper than keeping a spare set of dense histograms per shard.
		s.mu.Lock()
		for k := range s.h {
			d := &s.h[k]
			targets[k].mergeDense(d.h, d.overflow, d.negative)
			if d.h != nil {
				d.h.Reset()
			}
			d.overflow, d.negative = 0, 0
		}
		snap.Producer.Sent += s.sent
		snap.Producer.SentBytes += s.sentBytes
		snap.Producer.Acked += s.acked
		snap.Producer.AckedBytes += s.ackedBytes
		snap.Producer.PublishErrors += s.publishError
		s.sent, s.sentBytes, s.acked, s.ackedBytes, s.publishError = 0, 0, 0, 0, 0
		s.mu.Unlock()
	}
	if len(r.subs) > 0 {
		snap.Consumer.Subscriptions = make(map[string]Subscription, len(r.subs))
		for name, s := range r.subs {
			snap.Consumer.Subscriptions[name] = Subscription{
				CatchUp:       s.catchUp,
				Received:      s.received.Swap(0),
				ReceivedBytes: s.receivedBytes.Swap(0),
				Duplicates:    s.duplicates.Swap(0),
				Lost:          s.lost.Swap(0),
			}
		}
	}
	if next != r.phase {
		r.index = 0
	} else {
		r.index++
	}
	r.phase, r.start = next, now
	return snap
}
