package worker

import (
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sleepHoldingP sleeps d in nanosleep(2) as a raw syscall: the kernel wakes
// the thread within its timer slack (50 µs by default), and the goroutine
// keeps its P, so it neither queues for a P when it wakes nor makes the
// runtime hand the P to another thread while it sleeps. Measured on 2 cores
// with three Kafka brokers, at 20k msg/s: a Go timer of under a millisecond
// fires when the idle runtime next polls, and that poll waits whole
// milliseconds (runtime/netpoll_epoll.go rounds a sub-millisecond wait up to
// 1 ms): send delay p99 ~3 ms; nanosleep as an ordinary syscall is prompt
// but the P handoffs cost a third more CPU per message. Only for a
// goroutine that may hold a P (see pacer.holdP).
func sleepHoldingP(d time.Duration) {
	deadline := time.Now().Add(d)
	for d > 0 {
		ts := syscall.NsecToTimespec(int64(d))
		// EINTR (the runtime's preemption signal) just means: sleep the rest.
		syscall.RawSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
		d = time.Until(deadline)
	}
}

// shortSlice asks the kernel for a 100 µs time slice for the calling thread
// (SCHED_OTHER, same nice: no privilege needed) and returns the function
// that gives the thread the default slice back. Linux 6.12+'s EEVDF
// scheduler gives a task with a shorter slice an earlier virtual deadline,
// so when a sender wakes on cores the brokers keep busy it runs sooner: send
// delay p99 0.65 ms instead of 1.1 ms in the measurement above. Older kernels
// ignore the slice for SCHED_OTHER. Best effort: an error changes nothing.
func shortSlice() (restore func()) {
	set := func(slice time.Duration) {
		_ = unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_NORMAL, Runtime: uint64(slice)}, 0)
	}
	set(100 * time.Microsecond)
	return func() { set(0) } // 0: the kernel's default slice
}
