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
}

func newPacer(s *schedule, start time.Time) *pacer {
	p := &pacer{sched: s, base: start}
	p.rate, p.changed = s.get()
	return p
}

func (p *pacer) intended() time.Time {
	return p.base.Add(time.Duration(float64(p.n) * float64(time.Second) / p.rate))
}

// next waits until the next intended time and returns it; false when ctx
// ends.
func (p *pacer) next(ctx context.Context) (time.Time, bool) {
	for {
		select {
		case <-p.changed:
			// Rebase on the old grid's next point, so the change neither
			// skips nor repeats sends.
			if p.rate > 0 {
				p.base = p.intended()
			} else {
				p.base = time.Now()
			}
			p.n = 0
			p.rate, p.changed = p.sched.get()
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
		if d := time.Until(t); d > 0 {
			// Below ~50 µs a timer costs more than it saves; send a hair
			// early instead (recorded send delay is then ~0).
			if d > 50*time.Microsecond {
				timer := time.NewTimer(d)
				select {
				case <-ctx.Done():
					timer.Stop()
					return time.Time{}, false
				case <-p.changed:
					timer.Stop()
					continue
				case <-timer.C:
				}
			}
		}
		p.n++
		return t, true
	}
}
