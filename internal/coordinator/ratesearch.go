package coordinator

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
	"github.com/streambench/streambench-operator/internal/workload"
)

// The max-rate search (workload producerRate: 0) is a pure controller: the
// coordinator runs the load at Rate() for one evaluation period, reports
// what it observed to Observe, and sets the rate Observe returns, until
// Observe says done.
//
// OMB's RateController nudges the rate by a ramp factor that it halves on
// every sign of trouble and doubles otherwise, judged against an absolute
// 1000-message threshold. The factor collapses towards 0.01 after a few bad
// periods, so the rate creeps (stuck near 0 or ~1 msg/s), and one noisy
// period sends it back up (overshoot): OMB issues #84, #163, #329, #336.
// This search brackets instead: it doubles the rate until the system falls
// behind, then bisects between the highest rate held and the lowest rate
// that fell behind, judging each rate only after a settling period and
// against thresholds relative to the rate, and it never goes below MinRate.
// When the bracket is within Tolerance it holds the rate it found for a
// window of Hold (the brokers' write-back: periods of a few seconds judge
// the page cache and a bookie's write cache, not the disks under them) and
// judges the window as a whole: the rate published, the queues no longer
// at its end than at its start, and the corrected p99 latency within
// MaxLatency. A period in the window that falls clearly behind reopens the
// bracket below; a window that fails as a whole lowers the rate by
// StepDown (or to what the window achieved) and holds again.

// RateVerdict is how the search judged one evaluation period.
type RateVerdict string

const (
	// RateSettling: the first period at a new rate, not judged (queues
	// from the previous rate are still filling or draining).
	RateSettling RateVerdict = "settling"
	// RateSustainable: producers kept the rate and neither the producers'
	// pending acknowledgements nor the consumers' backlog grew.
	RateSustainable RateVerdict = "sustainable"
	// RateBehind: producers fell short of the rate or their pending
	// messages grew, or the consumers' backlog grew while they read less
	// than the rate (by more than Slack of what the period should publish).
	RateBehind RateVerdict = "behind"
	// RateErrors: publishes failed.
	RateErrors RateVerdict = "errors"
)

// MaxRateConfig tunes the search; zero fields take the defaults.
type MaxRateConfig struct {
	// Initial is the first rate tried, msg/s (default 10,000, as OMB).
	Initial float64
	// MinRate is the lowest rate tried (default 10 msg/s): the search never
	// proposes 0.
	MinRate float64
	// MaxRate caps the ramp (default 100,000,000 msg/s).
	MaxRate float64
	// Tolerance ends the bisection when high/low - 1 is within it
	// (default 0.05).
	Tolerance float64
	// Slack is the shortfall or growth, as a fraction of the messages the
	// period should publish, still judged sustainable (default 0.05):
	// measurement noise must not read as falling behind.
	Slack float64
	// HoldPeriods is how many judged periods each rate must pass after its
	// settling period (default 1).
	HoldPeriods int
	// ConfirmPeriods is how many periods the found rate must pass at the
	// end, at least (default 3).
	ConfirmPeriods int
	// Hold is how long the found rate must hold, judged as one window
	// after its settling period (default: ConfirmPeriods periods). The
	// coordinator derives it from the brokers' write-back
	// (workload.RateHold).
	Hold time.Duration
	// MaxLatency bounds the corrected p99 publish latency over the hold
	// window (0: no bound).
	MaxLatency time.Duration
	// StepDown is the fraction a rate that failed its hold is lowered by
	// before it is held again (default twice Tolerance).
	StepDown float64
	// RetryPeriods is how many failed periods in a row a rate may have and
	// still pass (default 1): a single GC pause or consumer rebalance must
	// not mark a rate unsustainable, or the bracket closes far below the
	// real maximum (OMB's "stuck" searches). Use -1 for none.
	RetryPeriods int
	// MaxPeriods ends the search unconverged (default 200).
	MaxPeriods int
}

func (c MaxRateConfig) withDefaults() MaxRateConfig {
	def := func(v *float64, d float64) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.Initial, 10000)
	def(&c.MinRate, 10)
	def(&c.MaxRate, 1e8)
	def(&c.Tolerance, 0.05)
	def(&c.Slack, 0.05)
	if c.HoldPeriods <= 0 {
		c.HoldPeriods = 1
	}
	if c.ConfirmPeriods <= 0 {
		c.ConfirmPeriods = 3
	}
	if c.StepDown <= 0 {
		c.StepDown = 2 * c.Tolerance
	}
	if c.MaxPeriods <= 0 {
		c.MaxPeriods = workload.RateSearchMaxPeriods
	}
	if c.RetryPeriods == 0 {
		c.RetryPeriods = 1
	} else if c.RetryPeriods < 0 {
		c.RetryPeriods = 0
	}
	return c
}

// RateObservation is what one evaluation period at Rate() showed, summed
// over all workers.
type RateObservation struct {
	// Elapsed is the period's length.
	Elapsed time.Duration
	// PublishRate is acknowledged messages per second in the period.
	PublishRate float64
	// ConsumeRate is received messages per second in the period, per
	// subscription (total received / subscriptions per topic).
	ConsumeRate float64
	// Backlog is published but not yet received messages per subscription
	// at the period's end.
	Backlog int64
	// Pending is messages the schedule wanted sent by the period's end but
	// neither acknowledged nor failed: the client's queue plus the load
	// generator's lag behind its schedule.
	Pending int64
	// PublishErrors is failed publishes in the period.
	PublishErrors int64
	// Latency is the corrected publish latency (ack - intended send) of
	// the period's acknowledgements, when the period was part of a hold
	// (Holding); nil otherwise.
	Latency *stats.Histogram
}

type searchMode int

const (
	modeRamp    searchMode = iota // doubling until behind
	modeDescend                   // halving until sustainable (no rate held yet)
	modeBisect                    // between lo (held) and hi (behind)
	modeConfirm                   // holding the rate found for Hold
	modeDone
)

// MaxRateSearch is the search's state. Not safe for concurrent use.
type MaxRateSearch struct {
	cfg  MaxRateConfig
	mode searchMode
	rate float64
	// lo is the highest rate judged sustainable (0: none yet); hi the
	// lowest judged behind (0: none yet).
	lo, hi float64
	// atRate counts periods observed at the current rate; passed counts
	// the judged ones that were sustainable, failed the failures in a row.
	atRate, passed, failed int
	prev                   *RateObservation
	// win sums the current hold window: the result is what the system
	// achieved there, not the target (a target up to Slack above capacity
	// still passes, and the achieved rate is the truth).
	win       holdWindow
	consumers bool
	steps     []results.RateStep
	holds     []results.RateHold
	converged bool
}

// holdWindow is what the periods of one hold showed, summed.
type holdWindow struct {
	elapsed                    time.Duration
	acked, consumed            float64
	startPending, startBacklog int64
	endPending, endBacklog     int64
	latency                    *stats.Histogram
}

// NewMaxRateSearch starts a search at cfg.Initial.
func NewMaxRateSearch(cfg MaxRateConfig) (*MaxRateSearch, error) {
	c := cfg.withDefaults()
	if c.MinRate > c.MaxRate {
		return nil, fmt.Errorf("rate search: MinRate (%g) must not exceed MaxRate (%g)", c.MinRate, c.MaxRate)
	}
	if c.Tolerance >= 1 || c.Slack >= 1 {
		return nil, fmt.Errorf("rate search: Tolerance (%g) and Slack (%g) are fractions below 1, e.g. 0.05", c.Tolerance, c.Slack)
	}
	return &MaxRateSearch{cfg: c, rate: clampRate(c.Initial, c)}, nil
}

func clampRate(r float64, c MaxRateConfig) float64 {
	return math.Min(math.Max(r, c.MinRate), c.MaxRate)
}

// Rate is the rate (msg/s, all producers) to run the next period at.
func (s *MaxRateSearch) Rate() float64 { return s.rate }

// Done reports whether the search has ended.
func (s *MaxRateSearch) Done() bool { return s.mode == modeDone }

// judge classifies one period at the current rate.
func (s *MaxRateSearch) judge(o RateObservation) RateVerdict {
	if s.atRate == 0 || s.prev == nil {
		return RateSettling
	}
	if o.PublishErrors > 0 {
		return RateErrors
	}
	expected := s.rate * o.Elapsed.Seconds()
	allowed := s.cfg.Slack * expected
	floor := (1 - s.cfg.Slack) * s.rate
	// Producers: they must publish the rate, and what they owe must not
	// pile up.
	if o.PublishRate < floor || float64(o.Pending-s.prev.Pending) > allowed {
		return RateBehind
	}
	// Consumers: behind only if the backlog grew AND they read less than
	// the rate. A backlog can grow below capacity while the producers flush
	// what an earlier, too-high rate left pending (they then publish above
	// the rate); consumers reading at least the rate are keeping up with it.
	if float64(o.Backlog-s.prev.Backlog) > allowed && o.ConsumeRate < (1-s.cfg.Slack)*math.Min(s.rate, o.PublishRate) {
		return RateBehind
	}
	return RateSustainable
}

// Observe takes the observation of the period just run at Rate() and
// returns the rate for the next period, and whether the search is done
// (then the returned rate is the result).
func (s *MaxRateSearch) Observe(o RateObservation) (next float64, done bool) {
	if s.mode == modeDone {
		return s.rate, true
	}
	v := s.judge(o)
	s.steps = append(s.steps, results.RateStep{
		TargetMsgPerSec: s.rate, PublishMsgPerSec: o.PublishRate, ConsumeMsgPerSec: o.ConsumeRate,
		Backlog: o.Backlog, Pending: o.Pending, PublishErrors: o.PublishErrors, Verdict: string(v),
	})
	obs := o
	s.prev = &obs
	if o.ConsumeRate > 0 || o.Backlog > 0 {
		s.consumers = true
	}
	s.atRate++
	if s.mode == modeConfirm {
		s.addToWindow(v, o)
	}

	switch v {
	case RateSettling:
	case RateSustainable:
		s.failed = 0
		s.passed++
		switch {
		case s.mode != modeConfirm:
			if s.passed >= s.cfg.HoldPeriods {
				s.held()
			}
		case s.passed >= s.cfg.ConfirmPeriods && s.win.elapsed >= s.cfg.Hold:
			s.judgeHold()
		}
	default:
		s.failed++
		if s.failed > s.cfg.RetryPeriods {
			s.fellBehind()
		}
	}
	if s.mode != modeDone && len(s.steps) >= s.cfg.MaxPeriods {
		s.finishUnconverged()
	}
	return s.rate, s.mode == modeDone
}

// Holding reports whether the next period is part of a hold window (its
// Latency is then wanted).
func (s *MaxRateSearch) Holding() bool {
	return s.mode == modeConfirm && s.atRate >= 1
}

// addToWindow adds a period at the rate being held to its window; the
// settling period only marks where the queues stood at the start.
func (s *MaxRateSearch) addToWindow(v RateVerdict, o RateObservation) {
	w := &s.win
	if v == RateSettling {
		*w = holdWindow{startPending: o.Pending, startBacklog: o.Backlog, endPending: o.Pending, endBacklog: o.Backlog}
		return
	}
	w.elapsed += o.Elapsed
	w.acked += o.PublishRate * o.Elapsed.Seconds()
	w.consumed += o.ConsumeRate * o.Elapsed.Seconds()
	w.endPending, w.endBacklog = o.Pending, o.Backlog
	if o.Latency != nil {
		if w.latency == nil {
			w.latency = stats.NewHistogram()
		}
		w.latency.Merge(o.Latency)
	}
}

// judgeHold judges the hold window as a whole: a dip inside it that the
// system made up for passes, a rate it kept only by letting its queues or
// its latency grow does not.
func (s *MaxRateSearch) judgeHold() {
	w, r := s.win, s.rate
	sec := w.elapsed.Seconds()
	h := results.RateHold{
		TargetMsgPerSec: r, Seconds: sec,
		PublishMsgPerSec: w.acked / sec, ConsumeMsgPerSec: w.consumed / sec,
		PendingGrowth: w.endPending - w.startPending, BacklogGrowth: w.endBacklog - w.startBacklog,
	}
	if w.latency != nil && w.latency.Count() > 0 {
		h.CorrectedP99Ms = float64(w.latency.ValueAtPercentile(99)) / 1000
	}
	allowed := s.cfg.Slack * r * sec
	var why []string
	if h.PublishMsgPerSec < (1-s.cfg.Slack)*r {
		why = append(why, fmt.Sprintf("published %.0f of %.0f msg/s", h.PublishMsgPerSec, r))
	}
	if float64(h.PendingGrowth) > allowed {
		why = append(why, fmt.Sprintf("the producers' pending messages grew by %d", h.PendingGrowth))
	}
	if s.consumers && float64(h.BacklogGrowth) > allowed && h.ConsumeMsgPerSec < (1-s.cfg.Slack)*math.Min(r, h.PublishMsgPerSec) {
		why = append(why, fmt.Sprintf("the consumers' backlog grew by %d", h.BacklogGrowth))
	}
	if b := s.cfg.MaxLatency; b > 0 && h.CorrectedP99Ms > float64(b.Microseconds())/1000 {
		why = append(why, fmt.Sprintf("corrected p99 %.1f ms above the bound of %.1f ms", h.CorrectedP99Ms, float64(b.Microseconds())/1000))
	}
	if len(why) == 0 {
		h.Verdict = "held"
		s.holds = append(s.holds, h)
		achieved := h.PublishMsgPerSec
		if s.consumers {
			achieved = math.Min(achieved, h.ConsumeMsgPerSec)
		}
		s.lo = r
		s.mode = modeDone
		s.converged = true
		s.rate = clampRate(math.Min(r, achieved), s.cfg)
		return
	}
	h.Verdict, h.Reason = "failed", strings.Join(why, "; ")
	s.holds = append(s.holds, h)
	// The bracket's low end was judged on short periods, which this hold
	// has just overruled: nothing below is known to hold.
	s.hi, s.lo = r, 0
	next := math.Min(r*(1-s.cfg.StepDown), h.PublishMsgPerSec)
	if s.consumers {
		next = math.Min(next, h.ConsumeMsgPerSec)
	}
	if next < s.cfg.MinRate {
		s.finishUnconverged()
		return
	}
	s.setRate(next)
}

// held: the current rate passed its periods.
func (s *MaxRateSearch) held() {
	r := s.rate
	s.lo = math.Max(s.lo, r)
	switch {
	case s.hi == 0 && r >= s.cfg.MaxRate:
		// Sustains the cap: nothing above to find.
		s.mode = modeConfirm
		s.setRate(r)
	case s.hi == 0:
		s.mode = modeRamp
		s.setRate(r * 2)
	default:
		s.bisect()
	}
}

// fellBehind: the current rate is not sustainable.
func (s *MaxRateSearch) fellBehind() {
	r := s.rate
	if s.mode == modeConfirm {
		// The rate found does not hold after all: reopen the bracket below.
		s.hi, s.lo = r, 0
	} else if s.hi == 0 || r < s.hi {
		s.hi = r
	}
	if s.lo == 0 || s.lo >= s.hi {
		s.lo = 0
		if r <= s.cfg.MinRate {
			// Even the floor falls behind: report it, unconverged, rather
			// than searching towards 0.
			s.finishUnconverged()
			return
		}
		s.mode = modeDescend
		s.setRate(r / 2)
		return
	}
	s.bisect()
}

// bisect tries the geometric middle of the bracket, or confirms lo when
// the bracket is narrow enough.
func (s *MaxRateSearch) bisect() {
	if s.hi/s.lo-1 <= s.cfg.Tolerance {
		s.mode = modeConfirm
		s.setRate(s.lo)
		return
	}
	s.mode = modeBisect
	// Geometric: the bracket starts as a factor of 2 (or more, from a
	// reopened confirmation), and relative precision is what is asked.
	s.setRate(math.Sqrt(s.lo * s.hi))
}

func (s *MaxRateSearch) setRate(r float64) {
	s.rate = clampRate(r, s.cfg)
	s.atRate, s.passed, s.failed = 0, 0, 0
	s.win = holdWindow{}
}

// finishUnconverged ends the search at the highest rate seen sustainable,
// or MinRate. (A hold that passed ends it, converged, in judgeHold.)
func (s *MaxRateSearch) finishUnconverged() {
	s.mode = modeDone
	s.converged = false
	s.rate = s.cfg.MinRate
	if s.lo > 0 {
		s.rate = s.lo
	}
}

// Result is the search's outcome for the results summary.
func (s *MaxRateSearch) Result() results.RateSearch {
	r := results.RateSearch{
		RateMsgPerSec: s.rate, Converged: s.converged,
		LowMsgPerSec: s.lo, HighMsgPerSec: s.hi,
		HoldSeconds: s.cfg.Hold.Seconds(), MaxP99LatencyMs: float64(s.cfg.MaxLatency.Microseconds()) / 1000,
		Steps: append([]results.RateStep(nil), s.steps...),
		Holds: append([]results.RateHold(nil), s.holds...),
	}
	if s.mode != modeDone {
		r.RateMsgPerSec = s.lo
	}
	return r
}

// measuredHold judges the measured phase of a max-rate run at rate as the
// search judged its holds: the producers published the rate, the
// consumers (subsPerTopic subscriptions per topic, 0 for none) read what
// was published, nothing failed, and the corrected p99 stayed within
// maxP99Ms (0: no bound). Slack is the search's. Nil without a measured
// phase.
func measuredHold(rate float64, snaps []stats.Snapshot, subsPerTopic, slack, maxP99Ms float64) *results.RateHeld {
	ms := stats.OfPhase(snaps, stats.PhaseMeasure)
	if len(ms) == 0 || !(rate > 0) {
		return nil
	}
	m := stats.Merge(ms...)
	h := &results.RateHeld{TargetMsgPerSec: rate, PublishMsgPerSec: m.Rate(m.Producer.Acked)}
	if subsPerTopic > 0 {
		h.ConsumeMsgPerSec = m.Rate(m.Consumer.Total().Received) / subsPerTopic
	}
	if m.Producer.CorrectedLatency.Count() > 0 {
		h.CorrectedP99Ms = float64(m.Producer.CorrectedLatency.ValueAtPercentile(99)) / 1000
	}
	var why []string
	if h.PublishMsgPerSec < (1-slack)*rate {
		why = append(why, fmt.Sprintf("published %.0f of %.0f msg/s", h.PublishMsgPerSec, rate))
	}
	if n := m.Producer.PublishErrors; n > 0 {
		why = append(why, fmt.Sprintf("%d publishes failed", n))
	}
	if subsPerTopic > 0 && h.ConsumeMsgPerSec < (1-slack)*h.PublishMsgPerSec {
		why = append(why, fmt.Sprintf("consumers read %.0f of the %.0f msg/s published", h.ConsumeMsgPerSec, h.PublishMsgPerSec))
	}
	if maxP99Ms > 0 && h.CorrectedP99Ms > maxP99Ms {
		why = append(why, fmt.Sprintf("corrected p99 %.1f ms above the bound of %.1f ms", h.CorrectedP99Ms, maxP99Ms))
	}
	h.Held, h.Reason = len(why) == 0, strings.Join(why, "; ")
	return h
}
