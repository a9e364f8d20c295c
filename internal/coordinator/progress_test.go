package coordinator

import (
	"math"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/internal/stats"
)

// snap is one worker's 10 s interval: acked messages of 1000 bytes with
// publish latency pubMs, and received messages with end-to-end latency e2eMs.
func snap(worker string, phase stats.Phase, index int, acked, received int64, pubMs, e2eMs int64) stats.Snapshot {
	pub, e2e := stats.NewHistogram(), stats.NewHistogram()
	for i := int64(0); i < acked; i++ {
		pub.RecordMicros(pubMs * 1000)
	}
	for i := int64(0); i < received; i++ {
		e2e.RecordMicros(e2eMs * 1000)
	}
	s := stats.Snapshot{
		Worker: worker, Workers: 1, Phase: phase, Index: index, Elapsed: 10 * time.Second,
		End:      time.Date(2026, 1, 1, 12, 0, 10*(index+1), 0, time.UTC),
		Producer: stats.Producer{Sent: acked, Acked: acked, AckedBytes: acked * 1000, PublishLatency: pub},
		Consumer: stats.Consumer{EndToEnd: e2e},
	}
	if received > 0 {
		s.Consumer.Subscriptions = map[string]stats.Subscription{"s": {Received: received, ReceivedBytes: received * 1000}}
	}
	return s
}

func TestProgressTracker(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	p := newProgressTracker(2)
	p.started(t0, time.Time{})

	// The interval the workers close when the load is scheduled, before it
	// starts, is not progress.
	pre := func(w string) stats.Snapshot {
		s := snap(w, stats.PhaseWarmup, 0, 0, 0, 0, 0)
		s.End = t0.Add(-time.Second)
		return s
	}
	if pr, ok := p.add([]stats.Snapshot{pre("a"), pre("b")}, t0.Add(time.Second)); ok {
		t.Fatalf("reported the interval before the load started: %+v", pr)
	}

	// The producer worker's interval arrives a poll before the consumer
	// worker's: nothing is reported for a half interval.
	if pr, ok := p.add([]stats.Snapshot{snap("a", stats.PhaseWarmup, 0, 1000, 0, 2, 0)}, t0.Add(10*time.Second)); ok {
		t.Fatalf("reported an interval only one of two workers delivered: %+v", pr)
	}
	pr, ok := p.add([]stats.Snapshot{
		snap("b", stats.PhaseWarmup, 0, 0, 1000, 0, 7),
		snap("a", stats.PhaseWarmup, 1, 1000, 0, 2, 0),
	}, t0.Add(20*time.Second))
	if !ok {
		t.Fatal("no report once both workers delivered warmup #0")
	}
	if pr.Phase != stats.PhaseWarmup || pr.Index != 0 || pr.Workers != 2 {
		t.Errorf("reported %s #%d of %d workers; want warmup #0 of 2", pr.Phase, pr.Index, pr.Workers)
	}
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > want*0.01+1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	// Merge keeps ~10 s for one interval of two workers: 1000 msgs / 10 s.
	near("publish msg/s", pr.PublishMsgPerSec, 100)
	near("publish MB/s", pr.PublishMBPerSec, 0.1)
	near("consume msg/s", pr.ConsumeMsgPerSec, 100)
	near("consume MB/s", pr.ConsumeMBPerSec, 0.1)
	near("publish p99", pr.PublishP99Ms, 2)
	near("e2e p99", pr.EndToEndP99Ms, 7)
	if pr.Elapsed != 20*time.Second {
		t.Errorf("elapsed %s, want 20s", pr.Elapsed)
	}
	if pr.Remaining != -1 {
		t.Errorf("remaining %s before the measured phase is scheduled, want -1 (unknown)", pr.Remaining)
	}

	// The measured phase starts: from now on the end is known. The stale
	// half interval warmup #1 is dropped once a newer one is complete.
	p.measuring(t0.Add(25*time.Second), 60*time.Second)
	pr, ok = p.add([]stats.Snapshot{
		snap("a", stats.PhaseMeasure, 0, 500, 0, 3, 0),
		snap("b", stats.PhaseMeasure, 0, 0, 500, 0, 9),
	}, t0.Add(35*time.Second))
	if !ok || pr.Phase != stats.PhaseMeasure || pr.Index != 0 {
		t.Fatalf("got %+v (ok %v), want measure #0", pr, ok)
	}
	if pr.Remaining != 50*time.Second {
		t.Errorf("remaining %s, want 50s", pr.Remaining)
	}
	if len(p.pending) != 0 || len(p.order) != 0 {
		t.Errorf("older incomplete intervals kept: %v", p.order)
	}
	if _, ok := p.add(nil, t0.Add(45*time.Second)); ok {
		t.Error("reported again without new snapshots")
	}
}
