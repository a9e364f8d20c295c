package coordinator

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/internal/protocol"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/worker"
)

// TestAccountingCatchesLossAndDuplicates runs the whole protocol against an
// in-memory broker (memdriver_test.go) that acknowledges some messages
// without storing them and stores others twice — the failure a real broker
// cannot be asked for — and checks the accounting names both.
func TestAccountingCatchesLossAndDuplicates(t *testing.T) {
	b := newMemBroker()
	b.dropEvery, b.dupEvery = 97, 89
	urls := startWorkers(t, 2, map[v1alpha1.System]worker.DriverFactory{v1alpha1.SystemKafka: b.factory})
	wl := shortWorkload("mem", 2000, 2)
	wl.WarmupDurationMinutes = f64(1.0 / 60)
	res, err := Run(context.Background(), Options{
		Workers: urls, Driver: driver.Config{System: v1alpha1.SystemKafka, RunID: "memrun"},
		Workload: wl, SnapshotInterval: time.Second, Logf: t.Logf, CatchUpTimeout: 3 * time.Second,
		CatchUpStall: time.Second, // the reader reaches the head at once; the dropped ones never come
	})
	if err != nil {
		t.Fatal(err)
	}
	acc := res.Accounting
	if acc.Lost == 0 || acc.Duplicates == 0 {
		t.Fatalf("accounting saw lost %d, duplicates %d; the broker dropped every 97th and doubled every 89th message", acc.Lost, acc.Duplicates)
	}
	// 1 subscription: every dropped message is one lost message.
	wantLost := int64(0)
	for n := 101; n <= int(acc.Sent)+50; n++ { // probes count in the broker's n
		if n%97 == 0 {
			wantLost++
		}
	}
	if acc.Lost > wantLost || acc.Lost < wantLost-3 {
		t.Errorf("lost %d, want about %d", acc.Lost, wantLost)
	}
	if acc.NotConsumed != 0 {
		t.Errorf("not consumed %d: the subscription had stopped receiving, so what it misses is lost", acc.NotConsumed)
	}
	// The series places every loss in an interval, by the workers'
	// sequence numbers at each cut: the broker dropped them all along.
	sum, err := results.Summarize(res.ResultsInput("memrun", "ns", nil))
	if err != nil {
		t.Fatal(err)
	}
	var placed int64
	var with int
	for _, p := range sum.Series.Points {
		if p.Lost == nil {
			t.Fatalf("point %s %d: no loss placed", p.Phase, p.Index)
		}
		placed += *p.Lost
		if *p.Lost > 0 {
			with++
		}
	}
	if placed != acc.Lost || with < 2 {
		t.Errorf("the series placed %d losses in %d intervals, want all %d, in more than one", placed, with, acc.Lost)
	}
	b.mu.Lock()
	left := len(b.topics)
	b.mu.Unlock()
	if left != 0 {
		t.Errorf("%d topics left behind after the run", left)
	}
}

// answers builds the workers' final answers of one producer (id 1, topic
// t) that sent sent messages, failed the ones in failed, and of one
// subscription s of t that received the ones in got.
func answers(t *testing.T, sent uint64, failed, got []uint64) []protocol.ReceivedResponse {
	t.Helper()
	var f, g worker.SeqSet
	for _, s := range failed {
		f.Add(s)
	}
	for _, s := range got {
		g.Add(s)
	}
	fb, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	gb, err := g.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return []protocol.ReceivedResponse{
		{Producers: []protocol.ProducerFinal{{ID: 1, Topic: "t", Sent: sent, Failed: f.Len(), FailedSet: fb}}},
		{Subscriptions: []protocol.SubscriptionSeqs{{Topic: "t", Subscription: "s", Producers: []protocol.ProducerSeqs{{ProducerID: 1, Set: gb}}}}},
	}
}

func seqRange(from, to uint64) []uint64 {
	var out []uint64
	for s := from; s < to; s++ {
		out = append(out, s)
	}
	return out
}

// TestAccountSaysLostOnlyWhenTheDrainEnded: what a subscription misses is
// lost when its drain ended (caught up to what it will ever get, or
// stalled), and not consumed when it ended still receiving; every failed
// send is left out, however many (a list capped at 100,000 counted the
// failures past it as acknowledged and lost).
func TestAccountSaysLostOnlyWhenTheDrainEnded(t *testing.T) {
	sub := SubscriptionRef{Topic: "t", Name: "s"}
	tests := []struct {
		name                           string
		sent                           uint64
		failed, got                    []uint64
		unfinished                     bool
		wantFailed, wantLost, wantNotC int64
	}{
		{"all received", 1000, nil, seqRange(0, 1000), false, 0, 0, 0},
		{"a gap, drain ended", 1000, nil, append(seqRange(0, 500), seqRange(600, 1000)...), false, 0, 100, 0},
		{"behind, still receiving at the deadline", 1000, nil, seqRange(0, 700), true, 0, 0, 300},
		{"150,000 failed sends", 200000, seqRange(0, 150000), seqRange(150000, 200000), false, 150000, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			acc, err := Account([]SubscriptionRef{sub}, answers(t, tt.sent, tt.failed, tt.got), nil, map[SubscriptionRef]bool{sub: tt.unfinished})
			if err != nil {
				t.Fatal(err)
			}
			if acc.Failed != tt.wantFailed || acc.Lost != tt.wantLost || acc.NotConsumed != tt.wantNotC {
				t.Errorf("failed %d, lost %d, not consumed %d; want %d, %d, %d", acc.Failed, acc.Lost, acc.NotConsumed, tt.wantFailed, tt.wantLost, tt.wantNotC)
			}
			if want := int64(tt.sent) - tt.wantFailed; acc.Acked != want || acc.Subscriptions[0].Expected != want {
				t.Errorf("acked %d, expected %d; want %d", acc.Acked, acc.Subscriptions[0].Expected, want)
			}
		})
	}
}

// TestSameClockAppliesNoOffset: workers of the coordinator's own process
// (local mode) get no clock offset; a measured one would be the loopback
// round trips' noise, added to every end-to-end latency.
func TestSameClockAppliesNoOffset(t *testing.T) {
	b := newMemBroker()
	urls := startWorkers(t, 2, map[v1alpha1.System]worker.DriverFactory{v1alpha1.SystemKafka: b.factory})
	wl := shortWorkload("sameclock", 500, 1)
	wl.WarmupDurationMinutes = f64(0)
	for _, same := range []bool{true, false} {
		res, err := Run(context.Background(), Options{
			Workers: urls, Driver: driver.Config{System: v1alpha1.SystemKafka, RunID: fmt.Sprintf("memclock%v", same)},
			Workload: wl, SnapshotInterval: time.Second, Logf: t.Logf, CatchUpTimeout: 5 * time.Second, SameClock: same,
		})
		if err != nil {
			t.Fatal(err)
		}
		var uncertainty int64
		for _, off := range res.ClockOffsets {
			if same && off != (protocol.ClockOffset{}) {
				t.Errorf("SameClock: offset %+v, want none", off)
			}
			uncertainty += off.UncertaintyMicros
		}
		// Measured, an offset over HTTP always has a round trip's
		// uncertainty: the test sees the measurement happen.
		if !same && uncertainty == 0 {
			t.Errorf("without SameClock the offsets %+v were not measured", res.ClockOffsets)
		}
	}
}

func TestDrainBound(t *testing.T) {
	for _, tc := range []struct {
		name      string
		backlog   int64
		rate      float64
		remaining time.Duration
		want      time.Duration
	}{
		{"nothing left: the minimum", 0, 1000, 0, MinCatchUpTimeout},
		{"a backlog read in seconds: the minimum", 5000, 1000, 0, MinCatchUpTimeout},
		{"twice what the backlog takes at the measured rate", 300000, 1000, 0, 10 * time.Minute},
		{"no measured rate: the minimum", 300000, 0, 0, MinCatchUpTimeout},
		{"within the run's deadline, less the reserve", 300000, 1000, 8 * time.Minute, 5 * time.Minute},
		{"a deadline already too close: no wait", 300000, 1000, time.Minute, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := drainBound(tc.backlog, tc.rate, tc.remaining); got != tc.want {
				t.Errorf("drainBound(%d, %v, %v) = %v, want %v", tc.backlog, tc.rate, tc.remaining, got, tc.want)
			}
		})
	}
}

func TestCatchUpStall(t *testing.T) {
	kafka := func(consumer map[string]string) driver.Config {
		return driver.Config{System: v1alpha1.SystemKafka, Overrides: &v1alpha1.DriverSpec{Kafka: &v1alpha1.KafkaDriver{Consumer: consumer}}}
	}
	for _, tc := range []struct {
		name string
		d    driver.Config
		want time.Duration
	}{
		{"Pulsar", driver.Config{System: v1alpha1.SystemPulsar}, DefaultCatchUpStall},
		{"Kafka, defaults (45 s session)", driver.Config{System: v1alpha1.SystemKafka}, DefaultCatchUpStall},
		{"Kafka, a shorter session", kafka(map[string]string{"session.timeout.ms": "10000"}), DefaultCatchUpStall},
		{"Kafka, a 2 min session: the stall outlasts it and the rebalance", kafka(map[string]string{"session.timeout.ms": "120000"}), 135 * time.Second},
		{"Kafka, invalid overrides: the default", kafka(map[string]string{"session.timeout.ms": "x"}), DefaultCatchUpStall},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := catchUpStall(tc.d); got != tc.want {
				t.Errorf("catchUpStall = %v, want %v", got, tc.want)
			}
		})
	}
}

// A send with no answer was promised nothing: it is neither acknowledged
// nor lost when the subscription misses it, and one that arrived anyway is
// no duplicate. The sends acknowledged and missed are still lost.
func TestAccountLeavesUnansweredOut(t *testing.T) {
	ans := answers(t, 100, []uint64{3}, append(seqRange(0, 3), append(seqRange(4, 80), 95)...))
	var u worker.SeqSet
	for s := uint64(80); s < 100; s++ {
		u.Add(s)
	}
	ub, err := u.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	ans[0].Producers[0].Unanswered, ans[0].Producers[0].UnansweredSet = u.Len(), ub
	subs := []SubscriptionRef{{Topic: "t", Name: "s"}}
	acc, err := Account(subs, ans, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if acc.Sent != 100 || acc.Failed != 1 || acc.Unanswered != 20 || acc.Acked != 79 || acc.Lost != 0 || acc.Subscriptions[0].Expected != 79 {
		t.Errorf("accounting %+v: want 100 sent, 1 failed, 20 unanswered, 79 acknowledged and expected, none lost", acc)
	}
	// Without the unanswered set the same answers lose 19 (80..99 but 95).
	ans[0].Producers[0].Unanswered, ans[0].Producers[0].UnansweredSet = 0, nil
	if acc, _ := Account(subs, ans, nil, nil); acc.Lost != 19 {
		t.Errorf("lost %d without the unanswered set, want 19", acc.Lost)
	}
	// A count that does not match its list is refused.
	ans[0].Producers[0].Unanswered, ans[0].Producers[0].UnansweredSet = 3, ub
	if _, err := Account(subs, ans, nil, nil); err == nil {
		t.Error("a producer's unanswered count unlike its list was taken")
	}
}
