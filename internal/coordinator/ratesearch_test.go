package coordinator

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
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
