//go:build linux

package pace

import (
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
)

// BenchmarkWake measures what one wake of a sender costs on this machine
// and how late it comes: the floor under the worker's CPU per message (a
// sender wakes up to once per MinWake) and under its send delay (no
// sender sends before it wakes). Run it with the brokers busy on the same
// cores to see the floor a benchmark meets:
//
//	go test ./internal/pace -run '^$' -bench Wake -benchtime 20000x
//
// Reported per wake: cpu-µs (the whole process's user+system CPU, so it
// includes the kernel's wake-up and the runtime's), and the overshoot past
// the intended time at p50, p99 and p99.9 in µs.
func BenchmarkWake(b *testing.B) {
	const d = 200 * time.Microsecond
	b.Run("nanosleep-holding-P", func(b *testing.B) { benchWake(b, false, func() { SleepHoldingP(d) }, d) })
	b.Run("nanosleep-holding-P-punctual", func(b *testing.B) { benchWake(b, true, func() { SleepHoldingP(d) }, d) })
	b.Run("time.Sleep", func(b *testing.B) { benchWake(b, false, func() { time.Sleep(d) }, d) })
}

func benchWake(b *testing.B, punctual bool, sleep func(), d time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if punctual {
		defer Punctual()()
	}
	late := make([]time.Duration, 0, b.N)
	cpu0 := processCPU()
	b.ResetTimer()
	for range b.N {
		due := time.Now().Add(d)
		sleep()
		late = append(late, time.Since(due))
	}
	b.StopTimer()
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/wake")
	slices.Sort(late)
	q := func(p float64) float64 { return float64(late[int(p*float64(len(late)-1))].Microseconds()) }
	b.ReportMetric(q(0.5), "late-p50-µs")
	b.ReportMetric(q(0.99), "late-p99-µs")
	b.ReportMetric(q(0.999), "late-p99.9-µs")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
