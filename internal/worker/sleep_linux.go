package worker

import (
	"syscall"
	"time"
)

// sleepPrecisely sleeps d on the calling goroutine's thread with
// nanosleep(2). The kernel wakes it within the thread's timer slack (50 µs by
// default); a Go timer of under a millisecond instead fires when the idle
// runtime next polls, and that poll waits whole milliseconds
// (runtime/netpoll_epoll.go rounds a sub-millisecond wait up to 1 ms), which
// was the worker's send delay p99 of ~3 ms at 20k msg/s. The syscall gives
// up the P like any blocking syscall, so other goroutines run meanwhile.
func sleepPrecisely(d time.Duration) {
	deadline := time.Now().Add(d)
	for d > 0 {
		ts := syscall.NsecToTimespec(int64(d))
		// EINTR (the runtime's preemption signal) just means: sleep the rest.
		_ = syscall.Nanosleep(&ts, nil)
		d = time.Until(deadline)
	}
}
