package worker

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/recycle"
	"github.com/streambench/streambench-operator/internal/stats"
)

// held stands in for a client library (a fake: what is tested is
// streambench's own bookkeeping between Send and the ack, which a real
// broker would only make slower to observe): it keeps each message and its
// ack for the test to acknowledge when it wants.
type held struct {
	sent [][]byte // copies of the payloads as sent
	bufs [][]byte // the payloads themselves, handed back at the ack
	tags []driver.Tag
	acks []driver.Acker
}

func (h *held) Send(_ context.Context, _, payload []byte, tag driver.Tag, onAck driver.Acker) {
	h.sent = append(h.sent, append([]byte(nil), payload...))
	h.bufs = append(h.bufs, payload)
	h.tags = append(h.tags, tag)
	h.acks = append(h.acks, onAck)
}

// ack acknowledges message k as a client does: with its own payload and tag.
func (h *held) ack(k int, err error)      { h.acks[k].Acked(h.bufs[k], h.tags[k], err) }
func (*held) Flush(context.Context) error { return nil }
func (*held) Close() error                { return nil }

// TestAckLatencies: the intended and send times a message's ack computes
// its latencies from travel in its driver.Tag, as nanoseconds since epoch,
// and its buffer is taken back at the ack. The ack must see each message's
// own times, on the monotonic clock:
// publish latency = ack - send, corrected = ack - intended, and a failed
// send is remembered by the sequence number its header carries, also when
// the buffers are reused.
func TestAckLatencies(t *testing.T) {
	payloads, err := NewPayloads(v1alpha1.WorkloadSpec{MessageSize: 1024}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	rec := stats.NewRecorder("w", stats.PhaseMeasure, time.Now())
	client := &held{}
	keys, _ := NewKeyDistributor("", rand.New(rand.NewPCG(3, 4)))
	p := &producer{id: 7, topic: "t", client: client, keys: keys, payloads: payloads, size: payloads.Size(), rec: rec, acks: rec.ShardFor(7), run: &run{},
		bufs: recycle.NewBuffers(payloads.Size())}
	sender := rec.OwnShard()

	// Message 0 is 3 ms late; it is acknowledged 20 ms after its send.
	// Message 1, sent on time, fails. Then message 2 reuses a buffer.
	start := time.Now()
	p.send(start.Add(-3*time.Millisecond), sender)
	p.send(time.Now(), sender)
	time.Sleep(20 * time.Millisecond)
	client.ack(0, nil)
	client.ack(1, errors.New("broker said no"))
	third := time.Now()
	p.send(third, sender)
	client.ack(2, nil)
	thirdSpan := time.Since(third)
	elapsed := time.Since(start)

	snap := rec.Cut(time.Now())
	if snap.Producer.Sent != 3 || snap.Producer.Acked != 2 || snap.Producer.PublishErrors != 1 {
		t.Fatalf("sent %d acked %d failed %d, want 3, 2, 1", snap.Producer.Sent, snap.Producer.Acked, snap.Producer.PublishErrors)
	}
	pub, corr := snap.Producer.PublishLatency, snap.Producer.CorrectedLatency
	// The largest publish latency is message 0's: at least the 20 ms it
	// waited, at most the test's whole span; its corrected latency adds
	// the 3 ms it was late.
	if mx := time.Duration(pub.Max()) * time.Microsecond; mx < 20*time.Millisecond || mx > elapsed {
		t.Errorf("max publish latency %v, want between 20 ms and %v", mx, elapsed)
	}
	if mx := time.Duration(corr.Max()) * time.Microsecond; mx < 23*time.Millisecond || mx > elapsed+3*time.Millisecond+time.Millisecond {
		t.Errorf("max corrected latency %v, want between 23 ms and %v", mx, elapsed+4*time.Millisecond)
	}
	// Message 2 was acknowledged right after its send, in a buffer that
	// held message 0 or 1: its latency is within thirdSpan, where a stale
	// stamp would add the 20 ms since their sends.
	if mn := time.Duration(pub.ValueAtPercentile(0)) * time.Microsecond; mn > thirdSpan {
		t.Errorf("min publish latency %v, want message 2's, at most %v: a reused buffer kept an old stamp", mn, thirdSpan)
	}
	if sd := time.Duration(snap.Producer.SendDelay.Max()) * time.Microsecond; sd < 3*time.Millisecond {
		t.Errorf("max send delay %v, want message 0's 3 ms or more", sd)
	}
	if !p.failedSeqs.Has(1) || p.failedSeqs.Len() != 1 {
		t.Errorf("failed seqs hold 1: %v, %d in all; want exactly seq 1", p.failedSeqs.Has(1), p.failedSeqs.Len())
	}
	if &client.bufs[2][0] != &client.bufs[0][0] && &client.bufs[2][0] != &client.bufs[1][0] {
		t.Error("message 2 got a new buffer; want one of the two given back at the acks")
	}
	for k, b := range client.sent {
		h, err := ParseHeader(b)
		if err != nil || h.ProducerID != 7 || h.Seq != uint64(k) {
			t.Errorf("message %d: header %+v (%v), want producer 7 seq %d", k, h, err, k)
		}
	}
}
