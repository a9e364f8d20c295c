package coordinator

import (
	"context"
	"fmt"
	"time"

	"github.com/streambench/streambench-operator/internal/protocol"
	"github.com/streambench/streambench-operator/internal/workload"
)

// The record-count bound (Options.MaxMessages) is read from the workers'
// live counters, which cost a request each: read often only when the count
// is near, so the phase overshoots by at most minCountPoll's worth of
// messages plus a round trip, and costs the workers next to nothing
// before.
const (
	minCountPoll   = 5 * time.Millisecond
	maxCountPoll   = time.Second
	firstCountPoll = 100 * time.Millisecond
)

// countPoll is how long to wait before reading the producers' counters
// again, with left messages still to acknowledge at rate msg/s (0 while
// unknown) and untilEnd before the workload's duration ends the phase:
// half the time the rest takes at the rate seen so far, within
// [minCountPoll, maxCountPoll], and never past the phase's end.
func countPoll(left int64, rate float64, untilEnd time.Duration) time.Duration {
	d := firstCountPoll
	if rate > 0 {
		d = time.Duration(float64(left) / rate / 2 * float64(time.Second))
	}
	d = min(max(d, minCountPoll), maxCountPoll)
	return max(min(d, untilEnd), 0)
}

// measure runs the measured phase: the workload's duration or, with
// Options.MaxMessages, until the producers acknowledged that many
// messages in it, whichever comes first (as kafka-producer-perf-test's
// --num-records bounds a maximum-rate run: an unbounded one filled a
// broker's disk). Which of the two ended it is logged and kept in the
// notes.
func (c *coordinator) measure(ctx context.Context) error {
	d := workload.TestDuration(c.wl)
	bound := c.o.MaxMessages
	if bound <= 0 {
		return sleep(ctx, d)
	}
	start := time.Now()
	end := start.Add(d)
	base, err := c.ackedNow(ctx)
	if err != nil {
		return fmt.Errorf("reading the producers' counters for the record-count bound: %w", err)
	}
	for {
		left := time.Until(end)
		n, err := c.ackedNow(ctx)
		if err != nil {
			return fmt.Errorf("reading the producers' counters for the record-count bound: %w", err)
		}
		n -= base
		if n >= bound {
			c.notef("the measured phase ended by its record count: %d messages acknowledged (bound %d) after %.1f s of the workload's %s",
				n, bound, time.Since(start).Seconds(), d)
			return nil
		}
		if left <= 0 {
			c.notef("the measured phase ended by the workload's duration (%s): %d messages acknowledged, short of the record-count bound %d", d, n, bound)
			return nil
		}
		var rate float64
		if el := time.Since(start).Seconds(); n > 0 && el > 0 {
			rate = float64(n) / el
		}
		if err := sleep(ctx, countPoll(bound-n, rate, left)); err != nil {
			return err
		}
	}
}

// ackedNow is the messages the producer workers have had acknowledged
// since the load started, summed.
func (c *coordinator) ackedNow(ctx context.Context) (int64, error) {
	got := make([]int64, len(c.clients))
	err := each(c.plan.ProducerWorkers, func(i int) error {
		var cr protocol.CountersResponse
		if err := c.clients[i].get(ctx, protocol.PathCounters, &cr, callOpt{}); err != nil {
			return err
		}
		for _, p := range cr.Producers {
			got[i] += p.Acked
		}
		return nil
	})
	var sum int64
	for _, n := range got {
		sum += n
	}
	return sum, err
}
