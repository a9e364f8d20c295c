package main

import (
	"context"
	"runtime"
	"time"

	"github.com/streambench/streambench-operator/internal/pace"
)

// sendPaced calls send once per message of a grid at rate msg/s from start
// to end, as the worker's sender does for its producers: on a thread of its
// own made punctual, sleeping in pace.SleepHoldingP until the next message
// is due, at most once per pace.MinWake, and sending what fell due
// meanwhile when it wakes. A message is never sent before its time less
// pace.EarlySend. It returns how late each message due from measureAt on
// was handed to the client (send delay) and how late each sleep ended from
// then on (wake overshoot).
//
// The worker waits longer than 2 ms on a Go timer (so a rate change or
// the end interrupts it); at the rates the floor runs, waits are shorter
// than that, and the floor has no rate changes.
func sendPaced(ctx context.Context, rate float64, start, measureAt, end time.Time, send func()) (delays, wakes *lateness) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer pace.Punctual()()
	delays, wakes = &lateness{}, &lateness{}
	interval := float64(time.Second) / rate
	var n int64
	var woke time.Time
	for ctx.Err() == nil {
		due := start.Add(time.Duration(float64(n) * interval))
		if !due.Before(end) {
			return delays, wakes
		}
		now := time.Now()
		if due.Sub(now) > pace.EarlySend {
			target := due
			if w := woke.Add(pace.MinWake); w.After(target) {
				target = w
			}
			pace.SleepHoldingP(time.Until(target))
			now = time.Now()
			woke = now
			if !now.Before(measureAt) {
				wakes.add(now.Sub(target))
			}
		}
		// Everything due by now goes out, each message's lateness counted
		// at its own hand-off, as the worker counts it: at high rates the
		// last of a wake's messages goes out well after the first.
		for ; !due.After(now.Add(pace.EarlySend)) && due.Before(end); due = start.Add(time.Duration(float64(n) * interval)) {
			if !due.Before(measureAt) {
				delays.add(time.Since(due))
			}
			send()
			n++
		}
	}
	return delays, wakes
}

// lateness counts durations in 10 µs buckets up to 1 s (the last bucket
// takes everything longer): a few nanoseconds per message, no allocation.
type lateness struct {
	buckets [100_001]int64
	n       int64
}

const bucket = 10 * time.Microsecond

func (l *lateness) add(d time.Duration) {
	i := 0
	if d > 0 {
		i = int(d / bucket)
	}
	if i >= len(l.buckets) {
		i = len(l.buckets) - 1
	}
	l.buckets[i]++
	l.n++
}

// quantile is the upper edge of the bucket holding quantile q, in ms; 0
// with nothing counted.
func (l *lateness) quantile(q float64) float64 {
	if l.n == 0 {
		return 0
	}
	rank := int64(q*float64(l.n-1)) + 1
	var seen int64
	for i, c := range l.buckets {
		seen += c
		if seen >= rank {
			return float64(time.Duration(i+1)*bucket) / float64(time.Millisecond)
		}
	}
	return float64(time.Duration(len(l.buckets))*bucket) / float64(time.Millisecond)
}
