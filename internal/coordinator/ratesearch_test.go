package coordinator

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
)

// These tests drive the max-rate search against a simulated system: a queue
// model whose capacity is known, so "did the search find the maximum" has
// an answer. That is a fake of the broker, on purpose: this is a test of the
// pure algorithm. The search against a real throttled broker is tested with
// the load generator (internal/coordinator's harness with real brokers).

// queueSystem sustains pubCap msg/s of publishing (acknowledgements) and
// conCap msg/s of consuming per subscription; above either, the producers'
// pending queue or the consumers' backlog grows.
type queueSystem struct {
	pubCap, conCap float64
	// capJitter is the relative standard deviation of the capacity per
	// period (a real system's capacity wobbles); measureNoise that of the
	// measured rates.
	capJitter, measureNoise float64
	// stall, when > 0, makes period number stall deliver nothing (a GC
	// pause, a consumer rebalance).
	stall int

	rng              *rand.Rand
	pending, backlog float64
	period           int
}

func (q *queueSystem) noisy(v, sd float64) float64 {
	if sd == 0 || q.rng == nil {
		return v
	}
	return v * math.Max(0, 1+sd*q.rng.NormFloat64())
}

// run plays one period at target msg/s and returns what the coordinator
// would observe.
func (q *queueSystem) run(target float64, d time.Duration) RateObservation {
	q.period++
	sec := d.Seconds()
	pubCap, conCap := q.noisy(q.pubCap, q.capJitter), q.noisy(q.conCap, q.capJitter)
	if q.period == q.stall {
		pubCap, conCap = 0, 0
	}
	offered := q.pending + target*sec
	acked := math.Min(offered, pubCap*sec)
	q.pending = offered - acked
	avail := q.backlog + acked
	consumed := math.Min(avail, conCap*sec)
	q.backlog = avail - consumed
	return RateObservation{
		Elapsed:     d,
		PublishRate: q.noisy(acked/sec, q.measureNoise),
		ConsumeRate: q.noisy(consumed/sec, q.measureNoise),
		Backlog:     int64(q.backlog),
		Pending:     int64(q.pending),
	}
}

func (q *queueSystem) capacity() float64 { return math.Min(q.pubCap, q.conCap) }

// search runs a search against q to its end and returns it; it fails the
// test if any proposed rate is not positive or the search does not end.
func search(t *testing.T, q *queueSystem, cfg MaxRateConfig) *MaxRateSearch {
	t.Helper()
	s, err := NewMaxRateSearch(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		if s.Rate() <= 0 {
			t.Fatalf("period %d: proposed rate %v; the search must never propose 0", i, s.Rate())
		}
		if _, done := s.Observe(q.run(s.Rate(), 5*time.Second)); done {
			return s
		}
	}
	t.Fatalf("search did not end in 1000 periods; steps: %+v", s.Result().Steps)
	return nil
}

func TestMaxRateSearchConvergesToCapacity(t *testing.T) {
	capacities := []float64{1000, 3000, 10000, 47000, 150000, 600000, 2000000}
	for _, c := range capacities {
		for _, limit := range []string{"publish", "consume"} {
			for _, noisy := range []bool{false, true} {
				for seed := uint64(1); seed <= 3; seed++ {
					if !noisy && seed > 1 {
						continue
					}
					name := fmt.Sprintf("C=%g/%s-limited/noisy=%v/seed=%d", c, limit, noisy, seed)
					t.Run(name, func(t *testing.T) {
						q := &queueSystem{pubCap: c * 1.5, conCap: c}
						if limit == "publish" {
							q.pubCap, q.conCap = c, c*1.5
						}
						if noisy {
							q.rng = rand.New(rand.NewPCG(seed, uint64(c)))
							q.capJitter, q.measureNoise = 0.03, 0.02
						}
						s := search(t, q, MaxRateConfig{})
						r := s.Result()
						if !r.Converged {
							t.Fatalf("did not converge: %+v", r)
						}
						if rel := math.Abs(r.RateMsgPerSec-c) / c; rel > 0.10 {
							t.Fatalf("found %.0f msg/s, capacity %.0f (off by %.1f%%); steps: %+v", r.RateMsgPerSec, c, rel*100, r.Steps)
						}
						if r.RateMsgPerSec > r.LowMsgPerSec || (r.HighMsgPerSec > 0 && r.HighMsgPerSec/r.LowMsgPerSec-1 > 0.05+1e-9) {
							t.Fatalf("bracket [%v, %v] not within 5%%, or result %v above its low end", r.LowMsgPerSec, r.HighMsgPerSec, r.RateMsgPerSec)
						}
						t.Logf("found %.0f (%+.1f%%) in %d periods", r.RateMsgPerSec, (r.RateMsgPerSec/c-1)*100, len(r.Steps))
						if len(r.Steps) > 80 {
							t.Errorf("took %d periods; expected well under 80", len(r.Steps))
						}
					})
				}
			}
		}
	}
}

// TestMaxRateSearchSurvivesOneStall: a single period where nothing moves
// (GC pause, rebalance) during the ramp must not close the bracket there.
func TestMaxRateSearchSurvivesOneStall(t *testing.T) {
	for _, stall := range []int{2, 4, 6, 9} {
		t.Run(fmt.Sprintf("stall-at-%d", stall), func(t *testing.T) {
			q := &queueSystem{pubCap: 400000, conCap: 400000, stall: stall}
			r := search(t, q, MaxRateConfig{}).Result()
			if rel := math.Abs(r.RateMsgPerSec-400000) / 400000; rel > 0.10 {
				t.Fatalf("found %.0f msg/s with a stall in period %d, capacity 400000; steps: %+v", r.RateMsgPerSec, stall, r.Steps)
			}
		})
	}
}

// TestMaxRateSearchNeverStuckAtZero: a system that cannot even sustain the
// floor ends the search at MinRate, unconverged, instead of creeping to 0.
func TestMaxRateSearchNeverStuckAtZero(t *testing.T) {
	q := &queueSystem{pubCap: 2, conCap: 2}
	s := search(t, q, MaxRateConfig{MinRate: 10})
	r := s.Result()
	if r.Converged || r.RateMsgPerSec != 10 {
		t.Fatalf("result %+v, want unconverged at MinRate 10", r)
	}
	for _, st := range r.Steps {
		if st.TargetMsgPerSec < 10 {
			t.Fatalf("tried %v msg/s, below MinRate", st.TargetMsgPerSec)
		}
	}
}

func TestMaxRateSearchCapsAtMaxRate(t *testing.T) {
	q := &queueSystem{pubCap: 1e9, conCap: 1e9}
	r := search(t, q, MaxRateConfig{MaxRate: 80000}).Result()
	if !r.Converged || r.RateMsgPerSec != 80000 {
		t.Fatalf("result %+v, want converged at MaxRate 80000", r)
	}
}

// TestMaxRateSearchReopensBracketWhenConfirmFails: capacity drops while the
// search confirms its rate; it must search again below, not report the
// rate that no longer holds.
func TestMaxRateSearchReopensBracketWhenConfirmFails(t *testing.T) {
	q := &queueSystem{pubCap: 100000, conCap: 100000}
	s, err := NewMaxRateSearch(MaxRateConfig{})
	if err != nil {
		t.Fatal(err)
	}
	dropped := false
	for i := 0; i < 500 && !s.Done(); i++ {
		if s.mode == modeConfirm && !dropped {
			q.pubCap, q.conCap = 60000, 60000
			dropped = true
		}
		s.Observe(q.run(s.Rate(), 5*time.Second))
	}
	r := s.Result()
	if !dropped || !r.Converged {
		t.Fatalf("dropped=%v result %+v", dropped, r)
	}
	if rel := math.Abs(r.RateMsgPerSec-60000) / 60000; rel > 0.10 {
		t.Fatalf("found %.0f after the capacity fell to 60000", r.RateMsgPerSec)
	}
}

func TestMaxRateSearchPublishErrorsAreUnsustainable(t *testing.T) {
	s, err := NewMaxRateSearch(MaxRateConfig{Initial: 1000, RetryPeriods: -1})
	if err != nil {
		t.Fatal(err)
	}
	ok := RateObservation{Elapsed: 5 * time.Second, PublishRate: 1000}
	s.Observe(ok) // settling
	bad := ok
	bad.PublishErrors = 3
	next, done := s.Observe(bad)
	if done || next != 500 {
		t.Fatalf("after errors at the first rate: next %v done %v, want 500 (descend)", next, done)
	}
	st := s.Result().Steps
	if st[0].Verdict != string(RateSettling) || st[1].Verdict != string(RateErrors) {
		t.Fatalf("verdicts %q, %q", st[0].Verdict, st[1].Verdict)
	}
}

func TestMaxRateConfigErrors(t *testing.T) {
	for _, cfg := range []MaxRateConfig{
		{MinRate: 1000, MaxRate: 10},
		{Tolerance: 1.5},
		{Slack: 2},
	} {
		if _, err := NewMaxRateSearch(cfg); err == nil {
			t.Errorf("config %+v accepted", cfg)
		}
	}
}

// writeBackSystem is a broker on a page cache (a fake of the broker, as
// queueSystem): it accepts up to burstCap msg/s while its dirty pages fit
// in dirtyCap, and its disk writes them back at diskCap. A rate between
// diskCap and burstCap is accepted in full until the dirty pages fill up,
// which takes far longer than a period of a few seconds.
type writeBackSystem struct {
	burstCap, diskCap, dirtyCap float64
	pending, dirty              float64
}

func (w *writeBackSystem) run(target float64, d time.Duration) RateObservation {
	sec := d.Seconds()
	offered := w.pending + target*sec
	acked := math.Min(offered, math.Min(w.burstCap*sec, w.dirtyCap-w.dirty+w.diskCap*sec))
	w.pending = offered - acked
	w.dirty = math.Max(0, w.dirty+acked-w.diskCap*sec)
	return RateObservation{Elapsed: d, PublishRate: acked / sec, Pending: int64(w.pending)}
}

// TestMaxRateSearchHoldsThroughWriteBack: a rate the page cache absorbs
// for a minute is not what the disk sustains. Judged on a few short
// periods (Hold 0, as before holds) the search reports several times the
// disk's rate; holding each rate it found for a window as long as the
// write-back, it reports at most the disk's rate.
func TestMaxRateSearchHoldsThroughWriteBack(t *testing.T) {
	const disk = 20000
	run := func(hold time.Duration) results.RateSearch {
		// 5 M messages of 1 KiB: Linux's dirty_ratio (20 %) of a 24 GiB host.
		sys := &writeBackSystem{burstCap: 60000, diskCap: disk, dirtyCap: 5e6}
		s, err := NewMaxRateSearch(MaxRateConfig{Hold: hold, MaxPeriods: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 1000 && !s.Done(); i++ {
			s.Observe(sys.run(s.Rate(), 5*time.Second))
		}
		return s.Result()
	}
	short := run(0)
	if short.RateMsgPerSec < 1.5*disk {
		t.Fatalf("without a hold the search found %.0f msg/s; the model should fool it (above %d): the test no longer shows the need", short.RateMsgPerSec, int(1.5*disk))
	}
	r := run(60 * time.Second)
	if !r.Converged || r.RateMsgPerSec > disk || r.RateMsgPerSec < 0.8*disk {
		t.Fatalf("holding for 60 s the search found %.0f msg/s (converged %v), the disk sustains %d; holds: %+v", r.RateMsgPerSec, r.Converged, disk, r.Holds)
	}
	last := r.Holds[len(r.Holds)-1]
	if last.Verdict != "held" || last.Seconds < 60 {
		t.Fatalf("last hold %+v: want a hold of at least 60 s that held", last)
	}
	t.Logf("short periods: %.0f msg/s; held for 60 s: %.0f msg/s in %d periods, %d holds", short.RateMsgPerSec, r.RateMsgPerSec, len(r.Steps), len(r.Holds))
}

// latencySystem has a capacity it never falls behind below, and a
// corrected p99 latency that grows as the rate nears it, as a queue's
// does: base / (1 - rate/capacity).
type latencySystem struct {
	queueSystem
	base time.Duration
}

func (l *latencySystem) run(target float64, d time.Duration) RateObservation {
	o := l.queueSystem.run(target, d)
	p99 := time.Duration(float64(l.base) / math.Max(1-target/l.capacity(), 0.001))
	h := stats.NewHistogram()
	for i := 0; i < 99; i++ {
		h.Record(l.base)
	}
	h.Record(p99)
	h.Record(p99)
	o.Latency = h
	return o
}

// TestMaxRateSearchLatencyBound: the search finds the highest rate whose
// corrected p99 is within the bound, not the rate where the queues grow.
func TestMaxRateSearchLatencyBound(t *testing.T) {
	const capacity = 50000
	sys := &latencySystem{queueSystem: queueSystem{pubCap: capacity, conCap: capacity}, base: 5 * time.Millisecond}
	s, err := NewMaxRateSearch(MaxRateConfig{Hold: 30 * time.Second, MaxLatency: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1000 && !s.Done(); i++ {
		s.Observe(sys.run(s.Rate(), 5*time.Second))
	}
	r := s.Result()
	// p99 = 5 ms / (1 - rate/50k) <= 50 ms below 45k msg/s.
	if !r.Converged || r.RateMsgPerSec > 45000 || r.RateMsgPerSec < 0.75*45000 {
		t.Fatalf("found %.0f msg/s (converged %v); the bound allows at most 45000; holds: %+v", r.RateMsgPerSec, r.Converged, r.Holds)
	}
	last := r.Holds[len(r.Holds)-1]
	if last.CorrectedP99Ms > 50 || last.Verdict != "held" {
		t.Fatalf("last hold %+v: want it held within 50 ms", last)
	}
	if len(r.Holds) < 2 || r.Holds[0].Verdict != "failed" || !strings.Contains(r.Holds[0].Reason, "above the bound of 50.0 ms") {
		t.Fatalf("holds %+v: the rate the queues allow must fail its hold on latency first", r.Holds)
	}
	if r.MaxP99LatencyMs != 50 || r.HoldSeconds != 30 {
		t.Fatalf("result states hold %v s and bound %v ms; want 30 and 50", r.HoldSeconds, r.MaxP99LatencyMs)
	}
}

func TestMeasuredHold(t *testing.T) {
	snap := func(phase stats.Phase, acked, received, failed int64, p99 time.Duration) stats.Snapshot {
		h := stats.NewHistogram()
		for i := 0; i < 100; i++ {
			h.Record(p99)
		}
		return stats.Snapshot{
			Workers: 1, Phase: phase, Elapsed: 10 * time.Second,
			Producer: stats.Producer{Acked: acked, PublishErrors: failed, CorrectedLatency: h},
			Consumer: stats.Consumer{Subscriptions: map[string]stats.Subscription{"s": {Received: received}}},
		}
	}
	for _, tc := range []struct {
		name  string
		snaps []stats.Snapshot
		subs  float64
		held  bool
		why   string
	}{
		{"held", []stats.Snapshot{snap(stats.PhaseMeasure, 10000, 10000, 0, 20*time.Millisecond)}, 1, true, ""},
		{"rate search ignored", []stats.Snapshot{
			snap(stats.PhaseRateSearch, 1, 1, 5, time.Second),
			snap(stats.PhaseMeasure, 9800, 9800, 0, 20*time.Millisecond)}, 1, true, ""},
		{"published short", []stats.Snapshot{snap(stats.PhaseMeasure, 9000, 9000, 0, 20*time.Millisecond)}, 1, false, "published 900 of 1000 msg/s"},
		{"consumers behind", []stats.Snapshot{snap(stats.PhaseMeasure, 10000, 9000, 0, 20*time.Millisecond)}, 1, false, "consumers read 900 of the 1000 msg/s published"},
		{"two subscriptions keep up", []stats.Snapshot{snap(stats.PhaseMeasure, 10000, 20000, 0, 20*time.Millisecond)}, 2, true, ""},
		{"produce-only", []stats.Snapshot{snap(stats.PhaseMeasure, 10000, 0, 0, 20*time.Millisecond)}, 0, true, ""},
		{"failures", []stats.Snapshot{snap(stats.PhaseMeasure, 10000, 10000, 3, 20*time.Millisecond)}, 1, false, "3 publishes failed"},
		{"latency", []stats.Snapshot{snap(stats.PhaseMeasure, 10000, 10000, 0, 80*time.Millisecond)}, 1, false, "above the bound of 50.0 ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := measuredHold(1000, tc.snaps, tc.subs, 0.05, 50)
			if h == nil || h.Held != tc.held || !strings.Contains(h.Reason, tc.why) {
				t.Fatalf("%+v, want held %v with %q", h, tc.held, tc.why)
			}
		})
	}
	if h := measuredHold(1000, []stats.Snapshot{snap(stats.PhaseRateSearch, 1, 1, 0, 0)}, 1, 0.05, 50); h != nil {
		t.Fatalf("no measured phase: %+v, want nil", h)
	}
}
