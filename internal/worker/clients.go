package worker

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/pace"
	"github.com/streambench/streambench-operator/internal/protocol"
	"github.com/streambench/streambench-operator/internal/recycle"
	"github.com/streambench/streambench-operator/internal/stats"
)

type producer struct {
	// Set at creation and only read since, by the sender and by the ack
	// callback alike: lines no one writes stay in both cores' caches.
	id       uint32
	topic    string
	client   driver.Producer
	keys     KeyDistributor
	payloads *Payloads
	size     int
	rec      *stats.Recorder
	acks     *stats.Shard // where this producer's acks are recorded (Recorder.ShardFor)
	run      *run
	_        [64]byte

	// nextSeq is the sender's alone to write, and also the count sent (a
	// second counter was one more locked add per message); the ack
	// callback, on the other core, writes acked and failed. Each side's
	// lines are its own, so neither side's writes take a line the other
	// holds.
	nextSeq  atomic.Uint64
	_        [64]byte
	inflight recycle.List[inflight] // taken by the sender, given back by the ack (its sides padded apart)
	_        [64]byte
	acked    atomic.Int64
	failed   atomic.Int64
	failedMu sync.Mutex
	// failedSeqs are the sequence numbers whose send failed: a bit each,
	// so a broker that rejects everything costs 125 kB per million
	// messages, and every failure is remembered (a capped list counted
	// the failures past its cap as acknowledged and lost).
	failedSeqs SeqSet
}

// inflight is one message between Send and its acknowledgement: its
// payload buffer and the times its latencies are computed from. Pooled with
// the buffer, so sending a message allocates nothing of its own; before, a
// closure, a payload slice header and its captured times per message were a
// tenth of the worker's CPU in malloc and GC at 20k msg/s.
//
// It is the message's Acker, and it fits one cache line: at 20k msg/s a
// message is in flight for ~20 ms, long enough for every line its ack
// touches to go cold (the brokers share the cores), and each cold line
// costs a few hundred nanoseconds. In a profile (1 producer, Kafka) the
// ack's first loads of a method value, the struct and the times on its
// second line were 4 % of the worker's CPU; on one line, 2-2.5 %. The
// times are nanoseconds since epoch, not time.Time (24 bytes each), and
// stay on Go's monotonic clock.
type inflight struct {
	p        *producer
	intended int64 // since epoch
	sent     int64 // since epoch
	template int   // the payload template buf holds (Payloads.Refill)
	buf      []byte
}

// epoch is what the inflight times count from: durations from it keep the
// monotonic clock, as the time.Time values they stand for did.
var epoch = time.Now()

func (p *producer) getInflight() *inflight {
	if i := p.inflight.Get(); i != nil {
		return i
	}
	return &inflight{p: p, buf: make([]byte, p.size), template: -1}
}

// senders is how many sender goroutines a worker with n producers and
// procs Ps runs: half the Ps (at least one, at most one per producer), so
// a sender that holds its P while it sleeps (pacer.holdP) always leaves the
// clients' goroutines as many Ps as the senders have. On 2 cores that is
// one sender for every producer: with one goroutine per producer, more
// producers than Ps meant Go timers, which fire whole milliseconds late
// (send delay p99 ~3 ms), and every producer's wake-ups cost CPU of their
// own. OMB likewise sends for many producers from one thread per core.
func senders(n, procs int) int {
	s := max(procs/2, 1)
	return min(s, n)
}

// sendLoop publishes for ps on the pacer's schedule until ctx ends. The
// clients' context is not ctx: stopping the load must not fail the
// messages already handed to the clients.
func sendLoop(ctx context.Context, pc *pacer, ps []*producer) {
	if pc.holdP {
		// A thread of its own, made punctual (pace.Punctual) while the
		// loop runs. The thread goes back to the runtime afterwards, with
		// the default settings: it must not exit, since a thread's exit
		// fires the Pdeathsig of every process it forked, and in local mode
		// that includes the brokers (internal/localbrokers), which a locked
		// thread ending with the loop killed in the tests.
		runtime.LockOSThread()
		restore := pace.Punctual()
		defer func() {
			restore()
			runtime.UnlockOSThread()
		}()
	}
	rec := ps[0].rec.OwnShard() // every producer of a worker records into its Recorder
	for {
		intended, turn, ok := pc.next(ctx)
		if !ok {
			return
		}
		ps[turn].send(intended, rec)
	}
}

// send hands the next message to the client; rec is the calling sender's.
func (p *producer) send(intended time.Time, rec *stats.Shard) {
	i := p.getInflight()
	seq := p.nextSeq.Load()
	sent := time.Now()
	i.intended = int64(intended.Sub(epoch))
	i.sent = int64(sent.Sub(epoch))
	p.payloads.Refill(i.buf, &i.template, Header{
		ProducerID: p.id, Seq: seq,
		SendMicros: sent.UnixMicro(), IntendedMicros: intended.UnixMicro(),
	})
	p.nextSeq.Store(seq + 1)
	rec.RecordSend(intended, sent, p.size)
	p.client.Send(context.Background(), p.keys.Next(), i.buf, i)
}

// Acked runs once per message, from the client's goroutine.
func (i *inflight) Acked(err error) {
	p := i.p
	if err != nil {
		p.failed.Add(1)
		p.rec.RecordPublishError()
		h, _ := ParseHeader(i.buf) // the sender wrote it
		p.failedMu.Lock()
		p.failedSeqs.Add(h.Seq)
		p.failedMu.Unlock()
		p.run.fail(fmt.Errorf("producer %d on %s: %w", p.id, p.topic, err))
	} else {
		now := time.Now()
		p.acked.Add(1)
		p.acks.RecordAck(epoch.Add(time.Duration(i.intended)), epoch.Add(time.Duration(i.sent)), now, p.size)
	}
	// The client is done with the payload once it has acknowledged it.
	p.inflight.Put(i)
}

type consumer struct {
	client driver.Consumer
	sub    *subscription
}

// subscription is the receiving side of one subscription on this worker,
// shared by its consumers here.
type subscription struct {
	topic, name string
	catchUp     bool
	rec         *stats.SubscriptionRecorder
	run         *run

	mu                                  sync.Mutex
	sets                                map[uint32]*SeqSet
	received, unique, bytes, duplicates int64
	probes, foreign                     int64
}

func (s *subscription) onMessage(m driver.Message) {
	now := time.Now()
	h, err := ParseHeader(m.Payload)
	s.mu.Lock()
	if err != nil {
		s.foreign++
		s.mu.Unlock()
		return
	}
	if h.Probe {
		s.probes++
		s.mu.Unlock()
		return
	}
	set := s.sets[h.ProducerID]
	if set == nil {
		set = &SeqSet{}
		s.sets[h.ProducerID] = set
	}
	dup := set.Add(h.Seq)
	s.received++
	s.bytes += int64(len(m.Payload))
	if dup {
		s.duplicates++
	} else {
		s.unique++
	}
	s.mu.Unlock()

	// End-to-end latency on the coordinator's time line: both ends are
	// shifted by their worker's measured clock offset (OMB #216).
	off := s.run.offsets.Load()
	sentAt := time.UnixMicro(h.SendMicros - off.ProducerMicros[h.ProducerID])
	recvAt := now.Add(-time.Duration(off.SelfMicros) * time.Microsecond)
	s.rec.RecordReceive(sentAt, recvAt, len(m.Payload))
	if dup {
		s.rec.RecordDuplicates(1)
	}
}

func (s *subscription) counters() protocol.SubscriptionCounters {
	s.mu.Lock()
	defer s.mu.Unlock()
	return protocol.SubscriptionCounters{
		Topic: s.topic, Subscription: s.name, CatchUp: s.catchUp,
		Received: s.received, Unique: s.unique, Bytes: s.bytes, Duplicates: s.duplicates,
		Probes: s.probes, Foreign: s.foreign,
	}
}

func (s *subscription) seqs() (protocol.SubscriptionSeqs, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := protocol.SubscriptionSeqs{Topic: s.topic, Subscription: s.name}
	ids := make([]uint32, 0, len(s.sets))
	for id := range s.sets {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		b, err := s.sets[id].MarshalBinary()
		if err != nil {
			return out, err
		}
		out.Producers = append(out.Producers, protocol.ProducerSeqs{ProducerID: id, Set: b})
	}
	return out, nil
}
