package worker

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/stats"
)

// held stands in for a client library (a fake: what is tested is
// streambench's own bookkeeping between Send and the ack, which a real
// broker would only make slower to observe): it keeps each message and its
// ack for the test to acknowledge when it wants.
type held struct {
	payloads [][]byte
	acks     []driver.AckFunc
}

func (h *held) Send(_ context.Context, _, payload []byte, onAck driver.AckFunc) {
	h.payloads = append(h.payloads, append([]byte(nil), payload...))
	h.acks = append(h.acks, onAck)
}
func (*held) Flush(context.Context) error { return nil }
func (*held) Close() error                { return nil }

// TestAckLatenciesFromTheStamp: the intended and send times a message's
// ack computes its latencies from travel in the stamp in front of its
// payload (on the header's cache line), not in the inflight struct. The
// ack must still see each message's own times, on the monotonic clock:
// publish latency = ack - send, corrected = ack - intended, and a failed
// send is remembered by the sequence number its header carries, also when
// the buffers are reused.
func TestAckLatenciesFromTheStamp(t *testing.T) {
	payloads, err := NewPayloads(v1alpha1.WorkloadSpec{MessageSize: 1024}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	rec := stats.NewRecorder("w", stats.PhaseMeasure, time.Now())
	client := &held{}
	keys, _ := NewKeyDistributor("", rand.New(rand.NewPCG(3, 4)))
	p := &producer{id: 7, topic: "t", client: client, keys: keys, payloads: payloads, size: payloads.Size(), rec: rec, run: &run{}}
	sender := rec.Sender()

	i := p.getInflight()
	if at := uintptr(unsafe.Pointer(unsafe.SliceData(i.stamp))); at%cacheLine != 0 {
		t.Errorf("stamp at %#x, not at the start of a cache line", at)
	}
	if got, want := uintptr(unsafe.Pointer(unsafe.SliceData(i.buf))), uintptr(unsafe.Pointer(unsafe.SliceData(i.stamp)))+stampSize; got != want {
		t.Errorf("payload at %#x, want right after the stamp at %#x", got, want)
	}
	if len(i.buf) != 1024 || cap(i.buf) != 1024 {
		t.Errorf("payload len %d cap %d, want 1024 and 1024 (the client must not grow into what follows)", len(i.buf), cap(i.buf))
	}
	p.inflight.Put(i)

	// Message 0 is 3 ms late; it is acknowledged 20 ms after its send.
	// Message 1, sent on time, fails. Then message 2 reuses a buffer.
	start := time.Now()
	p.send(start.Add(-3*time.Millisecond), sender)
	p.send(time.Now(), sender)
	time.Sleep(20 * time.Millisecond)
	client.acks[0](nil)
	client.acks[1](errors.New("broker said no"))
	third := time.Now()
	p.send(third, sender)
	client.acks[2](nil)
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
	for k, b := range client.payloads {
		h, err := ParseHeader(b)
		if err != nil || h.ProducerID != 7 || h.Seq != uint64(k) {
			t.Errorf("message %d: header %+v (%v), want producer 7 seq %d", k, h, err, k)
		}
	}
}
