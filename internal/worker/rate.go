package worker

import (
	"context"
	"sync"
	"time"

	"github.com/streambench/streambench-operator/internal/pace"
)

// schedule is a worker's publish rate, shared by its producers and
// adjustable at run time (rate search). Each producer sends on its own
// intended-time grid derived from it.
type schedule struct {
	mu      sync.Mutex
	perProd float64 // msg/s of each producer
	changed chan struct{}
}

func newSchedule() *schedule { return &schedule{changed: make(chan struct{})} }

func (s *schedule) set(perProducer float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.perProd = perProducer
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *schedule) get() (float64, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.perProd, s.changed
}

// pacer yields the intended send times of a sender's producers and whose
// turn each is. Producer i of a worker's N sends its n-th message at
// base + (n + i/N)/rate (rate is each producer's): the worker's producers
// take turns evenly over one producer's interval, as under OMB's one rate
// limiter per worker, instead of sending N messages at the same instant.
// A sender's producers are some of the N (see senders); their phases i/N,
// ascending, are the order of its turns within a round. An intended time
// never moves because a send was late: a late sender sends at once and its
// lateness is recorded as send delay and in the corrected latency, so
// coordinated omission shows instead of hiding (OMB #152, #247). A rate
// change starts a new grid at the next intended time.
type pacer struct {
	sched   *schedule
	rate    float64
	changed <-chan struct{}
	base    time.Time
	round   int64
	// phases are the places of the sender's producers in the worker's
	// interval, in [0, 1), ascending; turn is the next one's index.
	phases []float64
	turn   int
	timer  *time.Timer // reused for coarse waits
	woke   time.Time   // end of the last precise sleep
	// holdP: the sender may keep its P while it waits (pace.SleepHoldingP),
	// because the worker leaves the clients' goroutines at least one P
	// (senders). Without it every wait is a Go timer.
	holdP bool
}

// coarseWait: a wait longer than this sleeps on a Go timer (which ctx and
// rate changes interrupt) until coarseWait before the intended time; the
// last stretch is slept precisely (pace.SleepHoldingP), as a Go timer can
// fire up to a millisecond late. The wake rules (pace.EarlySend,
// pace.MinWake) are shared with hack/floor's bare-client sender.
const coarseWait = 2 * time.Millisecond

// newPacer paces, from start, the producers whose places in the worker's
// interval are phases (ascending, each in [0, 1)).
func newPacer(s *schedule, start time.Time, phases []float64) *pacer {
	p := &pacer{sched: s, base: start, phases: phases}
	p.rate, p.changed = s.get()
	return p
}

func (p *pacer) intended() time.Time {
	return p.base.Add(time.Duration((float64(p.round) + p.phases[p.turn]) * float64(time.Second) / p.rate))
}

// next waits until the next intended time and returns it with the index
// (into phases) of the producer whose turn it is; false when ctx ends.
func (p *pacer) next(ctx context.Context) (time.Time, int, bool) {
	for {
		select {
		case <-p.changed:
			// Rebase on the old grid's next point, so the change neither
			// skips nor repeats sends: the new grid's first point is it,
			// and the producers keep their turns. After a pause (rate 0,
			// as the rate search makes) the grid starts now, each
			// producer at its turn from the first.
			running := p.rate > 0
			next := time.Now()
			if running {
				next = p.intended()
			} else {
				p.turn = 0
			}
			p.round = 0
			p.rate, p.changed = p.sched.get()
			if running && p.rate > 0 {
				next = next.Add(-time.Duration(p.phases[p.turn] * float64(time.Second) / p.rate))
			}
			p.base = next
			continue
		default:
		}
		if ctx.Err() != nil {
			return time.Time{}, 0, false
		}
		if p.rate <= 0 {
			select {
			case <-ctx.Done():
				return time.Time{}, 0, false
			case <-p.changed:
			}
			continue
		}
		t := p.intended()
		d := time.Until(t)
		if d > coarseWait || (d > pace.EarlySend && !p.holdP) {
			if p.holdP {
				d -= coarseWait
			}
			if !p.sleepCoarse(ctx, d) {
				return time.Time{}, 0, false
			}
			continue // a rate change or the rest of the wait
		}
		if d > pace.EarlySend {
			if w := time.Until(p.woke.Add(pace.MinWake)); w > d {
				d = w
			}
			pace.SleepHoldingP(d)
			p.woke = time.Now()
		}
		turn := p.turn
		if p.turn++; p.turn == len(p.phases) {
			p.turn = 0
			p.round++
		}
		return t, turn, true
	}
}

// sleepCoarse waits d on the pacer's timer; false when ctx ended, true when
// d passed or the rate changed.
func (p *pacer) sleepCoarse(ctx context.Context, d time.Duration) bool {
	if p.timer == nil {
		p.timer = time.NewTimer(d)
	} else {
		p.timer.Reset(d) // Go 1.23+: no stale value can be received after Reset
	}
	select {
	case <-ctx.Done():
		p.timer.Stop()
		return false
	case <-p.changed:
		p.timer.Stop()
		return true
	case <-p.timer.C:
		return true
	}
}
