package worker

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/protocol"
	"github.com/streambench/streambench-operator/internal/recycle"
	"github.com/streambench/streambench-operator/internal/stats"
)

// loopback stands in for a client library (a fake: the benchmark measures
// streambench's own work per message, not a broker's): Send acknowledges at
// once and hands the payload to the subscription, as a consumer would.
type loopback struct{ deliver driver.ConsumerCallback }

func (l loopback) Send(_ context.Context, _, payload []byte, tag driver.Tag, onAck driver.Acker) {
	l.deliver(driver.Message{Payload: payload})
	onAck.Acked(payload, tag, nil)
}
func (loopback) Flush(context.Context) error { return nil }
func (loopback) Close() error                { return nil }

// BenchmarkMessagePath is what streambench itself spends on one message
// between the pacer and the client and back: the header, the send, ack and
// receive records, the loss and duplicate accounting. The client library's
// own cost and the pacer's wake-ups are not in it (hack/floor measures
// those); at 20k msg/s, 1 µs per message here is 1 CPU-s per million
// messages beside the client's.
//
//	go test ./internal/worker -run '^$' -bench MessagePath -benchmem
func BenchmarkMessagePath(b *testing.B) {
	wl := v1alpha1.WorkloadSpec{MessageSize: 1024}
	payloads, err := NewPayloads(wl, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		b.Fatal(err)
	}
	rec := stats.NewRecorder("bench", stats.PhaseMeasure, time.Now())
	r := &run{rec: rec}
	r.offsets.Store(&protocol.ClockOffsetsRequest{ProducerMicros: map[uint32]int64{}})
	sub := &subscription{topic: "t", name: "s", rec: rec.Subscription("s", false), run: r, sets: map[uint32]*SeqSet{}}
	keys, _ := NewKeyDistributor("", rand.New(rand.NewPCG(3, 4)))
	p := &producer{id: 1, topic: "t", client: loopback{sub.onMessage}, keys: keys, payloads: payloads, size: payloads.Size(), rec: rec, acks: rec.ShardFor(1), run: r,
		bufs: recycle.NewBuffers(payloads.Size())}
	sender := rec.OwnShard()
	start := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		p.send(start.Add(time.Duration(i)*50*time.Microsecond), sender)
	}
	b.StopTimer()
	if got := sub.counters().Unique; got != int64(b.N) {
		b.Fatalf("received %d unique of %d sent", got, b.N)
	}
}
