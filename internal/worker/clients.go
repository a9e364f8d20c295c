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
	// bufs are the payload buffers: taken by the sender, given back by
	// the ack (recycle.List pads its two sides apart). A buffer in flight
	// is the client's; with one payload template it keeps the template's
	// bytes, and only the header is written again.
	bufs *recycle.Buffers
	_    [64]byte

	// nextSeq is the sender's alone to write, and also the count sent (a
	// second counter was one more locked add per message); the ack
	// callback, on the other core, writes acked and failed. Each side's
	// lines are its own, so neither side's writes take a line the other
	// holds.
	nextSeq  atomic.Uint64
	_        [64]byte
	acked    atomic.Int64
	failed   atomic.Int64
	failedMu sync.Mutex
	// ackedSeqs are the sequence numbers acknowledged, so a send left
	// unanswered at the end is known by number (ackedMu guards them).
	ackedMu   sync.Mutex
	ackedSeqs SeqSet
	// closeOnce closes client once: at a flush that timed out
	// (StopLoad) or with the run.
	closeOnce sync.Once
	closeErr  error
	// failedSeqs are the sequence numbers whose send failed: a bit each,
	// so a broker that rejects everything costs 125 kB per million
	// messages, and every failure is remembered (a capped list counted
	// the failures past its cap as acknowledged and lost).
	failedSeqs SeqSet
}

// A message between Send and its ack is its payload buffer and a
// driver.Tag holding its intended and send times (nanoseconds since epoch,
// on Go's monotonic clock), which the client carries in its own record of
// the message; the producer itself is the Acker. Nothing of the worker's
// own is allocated or touched per message beyond the buffer: at 20k msg/s
// a message is in flight for ~20 ms and every line only the worker touched
// has gone cold by its ack (the brokers share the cores). A pooled
// one-line struct per message (intended and send times, the buffer, the
// producer) cost a cold line at the send and another at the ack: without
// it the worker spent 0.41-0.57 CPU-s per million messages less on Kafka
// (4-5 %, measured against it in the same run, both orders).

// epoch is what the tags' times count from: durations from it keep the
// monotonic clock, as time.Time values would.
var epoch = time.Now()

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
	buf, fresh := p.bufs.Get()
	seq := p.nextSeq.Load()
	sent := time.Now()
	p.payloads.Refill(buf, fresh, Header{
		ProducerID: p.id, Seq: seq,
		SendMicros: sent.UnixMicro(), IntendedMicros: intended.UnixMicro(),
	})
	p.nextSeq.Store(seq + 1)
	rec.RecordSend(intended, sent, p.size)
	tag := driver.Tag{int64(intended.Sub(epoch)), int64(sent.Sub(epoch))}
	p.client.Send(context.Background(), p.keys.Next(), buf, tag, p)
}

// unanswered is how many sends have had neither an ack nor a failure.
func (p *producer) unanswered() int64 {
	return int64(p.nextSeq.Load()) - p.acked.Load() - p.failed.Load()
}

// close closes the producer's client once.
func (p *producer) close() error {
	p.closeOnce.Do(func() { p.closeErr = p.client.Close() })
	return p.closeErr
}

// Acked runs once per message, from the client's goroutine, with the
// message's buffer and the tag send gave it.
func (p *producer) Acked(payload []byte, tag driver.Tag, err error) {
	if err != nil {
		p.failed.Add(1)
		p.rec.RecordPublishError()
		h, _ := ParseHeader(payload) // the sender wrote it
		p.failedMu.Lock()
		p.failedSeqs.Add(h.Seq)
		p.failedMu.Unlock()
		p.run.fail(fmt.Errorf("producer %d on %s: %w", p.id, p.topic, err))
	} else {
		now := time.Now()
		if h, err := ParseHeader(payload); err == nil {
			p.ackedMu.Lock()
			p.ackedSeqs.Add(h.Seq)
			p.ackedMu.Unlock()
		}
		p.acked.Add(1)
		p.acks.RecordAck(epoch.Add(time.Duration(tag[0])), epoch.Add(time.Duration(tag[1])), now, p.size)
	}
	// The client is done with the payload once it has acknowledged it.
	p.bufs.Put(payload)
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
