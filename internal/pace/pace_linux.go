//go:build linux

package pace

import (
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// SleepHoldingP sleeps d in nanosleep(2) as a raw syscall: the kernel wakes
// the thread within its timer slack (Punctual makes that 1 ns), and the
// goroutine keeps its P, so it neither queues for a P when it wakes nor makes
// the runtime hand the P to another thread while it sleeps. Measured on 2
// cores with three Kafka brokers, at 20k msg/s: a Go timer of under a
// millisecond fires when the idle runtime next polls, and that poll waits
// whole milliseconds (runtime/netpoll_epoll.go rounds a sub-millisecond
// wait up to 1 ms): send delay p99 ~3 ms; nanosleep as an ordinary syscall
// is prompt but the P handoffs cost a third more CPU per message. Only for a
// goroutine that may hold a P: one that leaves the clients' goroutines a P
// of their own.
func SleepHoldingP(d time.Duration) {
	deadline := time.Now().Add(d)
	for d > 0 {
		ts := syscall.NsecToTimespec(int64(d))
		// EINTR (the runtime's preemption signal) just means: sleep the rest.
		syscall.RawSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
		d = time.Until(deadline)
	}
}

// Punctual makes the calling thread wake on time and returns the function
// that undoes it; the caller holds the thread (runtime.LockOSThread) until
// then. Two settings, neither needing privilege, both best effort (an error
// changes nothing):
//
//   - A 100 µs time slice (SCHED_OTHER, same nice). Linux 6.12+'s EEVDF
//     scheduler gives a task with a shorter slice an earlier virtual
//     deadline, so when a sender wakes on cores the brokers keep busy it runs
//     sooner: send delay p99 0.65 ms instead of 1.1 ms at 20k msg/s with
//     three Kafka brokers on the same 2 cores. Older kernels ignore it.
//   - A timer slack of 1 ns instead of the default 50 µs: the kernel may
//     otherwise defer a sleeper's wake by up to the slack to batch it with
//     other timers. On this VM a 200 µs nanosleep then woke 89 µs late at the
//     median instead of 36 µs, for the same CPU per wake (~24 µs: a wake's
//     cost is the VM's, not the slack's).
func Punctual() (restore func()) {
	slice := func(d time.Duration) {
		_ = unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_NORMAL, Runtime: uint64(d)}, 0)
	}
	slice(100 * time.Microsecond)
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	return func() {
		slice(0)                                           // the kernel's default slice
		_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 0, 0, 0, 0) // 0: the thread's default slack
	}
}
