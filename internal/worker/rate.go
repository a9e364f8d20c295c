package worker

import (
	"context"
	"sync"
	"time"
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

// pacer yields the intended send times of one producer. The n-th intended
// time is base + n/rate and never moves because a send was late: a late
// sender sends at once and its lateness is recorded as send delay and in the
// corrected latency, so coordinated omission shows instead of hiding (OMB
// #152, #247). A rate change starts a new grid at the next intended time.
type pacer struct {
	sched   *schedule
	rate    float64
	changed <-chan struct{}
	base    time.Time
	n       int64
	// phase is this producer's place in the worker's interval, in [0, 1):
	// its n-th send is due at base + (n + phase)/rate, so the worker's N
	// producers take turns evenly, as under OMB's one rate limiter per
	// worker, instead of sending N messages at the same instant.
	phase float64
	timer *time.Timer // reused for coarse waits
	woke  time.Time   // end of the last precise sleep
	// holdP: the producer may keep its P while it waits (sleepHoldingP),
	// because the worker has more Ps than producers, so the clients'
	// goroutines always have one. Without it every wait is a Go timer.
	holdP bool
}

const (
	// earlySend: a message due sooner than this is sent at once, a hair
	// early (its recorded send delay is then 0), as a sleep this short
	// costs more than it saves.
	earlySend = 50 * time.Microsecond
	// coarseWait: a wait longer than this sleeps on a Go timer (which ctx
	// and rate changes interrupt) until coarseWait before the intended time;
	// the last stretch is slept precisely (sleepHoldingP), as a Go timer
	// can fire up to a millisecond late.
	coarseWait = 2 * time.Millisecond
	// minWake: a producer wakes from a precise sleep at most this often;
	// the messages that fall due meanwhile go out together when it wakes,
	// late by less than minWake, and that lateness is recorded as send
	// delay like any other. On this VM a thread's wake costs ~20 µs of CPU;
	// at 20k msg/s, 200 µs cost 13.1 CPU-s per million messages, 400 µs
	// 12.2 and 1 ms 10.6, with send delay p99 0.9, 1.1 and 1.6 ms.
	minWake = 400 * time.Microsecond
)

// newPacer paces producer i of a worker's n from start.
func newPacer(s *schedule, start time.Time, i, n int) *pacer {
	p := &pacer{sched: s, base: start}
	if n > 0 {
		p.phase = float64(i) / float64(n)
	}
	p.rate, p.changed = s.get()
	return p
}

func (p *pacer) intended() time.Time {
	return p.base.Add(time.Duration((float64(p.n) + p.phase) * float64(time.Second) / p.rate))
}

// next waits until the next intended time and returns it; false when ctx
// ends.
func (p *pacer) next(ctx context.Context) (time.Time, bool) {
	for {
		select {
		case <-p.changed:
			// Rebase on the old grid's next point, so the change neither
			// skips nor repeats sends: the new grid's first point is it,
			// and the producers keep their turns. After a pause (rate 0,
			// as the rate search makes) the grid starts now, each
			// producer at its turn.
			running := p.rate > 0
			next := time.Now()
			if running {
				next = p.intended()
			}
			p.n = 0
			p.rate, p.changed = p.sched.get()
			if running && p.rate > 0 {
				next = next.Add(-time.Duration(p.phase * float64(time.Second) / p.rate))
			}
			p.base = next
			continue
		default:
		}
		if ctx.Err() != nil {
			return time.Time{}, false
		}
		if p.rate <= 0 {
			select {
			case <-ctx.Done():
				return time.Time{}, false
			case <-p.changed:
			}
			continue
		}
		t := p.intended()
		d := time.Until(t)
		if d > coarseWait || (d > earlySend && !p.holdP) {
			if p.holdP {
				d -= coarseWait
			}
			if !p.sleepCoarse(ctx, d) {
				return time.Time{}, false
			}
			continue // a rate change or the rest of the wait
		}
		if d > earlySend {
			if w := time.Until(p.woke.Add(minWake)); w > d {
				d = w
			}
			sleepHoldingP(d)
			p.woke = time.Now()
		}
		p.n++
		return t, true
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
