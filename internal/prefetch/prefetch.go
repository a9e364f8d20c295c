// Package prefetch asks the CPU to fetch a cache line ahead of its use.
//
// The load generator writes a header into each message's buffer, and by
// the time a buffer comes round again (~20 ms in flight at 20k msg/s, the
// brokers on the same cores) its first line has gone cold or sits in the
// other core's cache, where the client read it. The write then stalls the
// sender for the line: ~0.5 µs per message in a Kafka profile, a fifth of
// streambench's own CPU. Asked for the line when the buffer is taken, one
// message ahead, the CPU fetches it while the sender sleeps until its next
// send time, and the write finds it at hand.
package prefetch

import "unsafe"

// ForWrite hints that the line holding p will soon be written. It is a
// hint: it changes no memory, never faults, and on CPUs or architectures
// without the instruction it does nothing.
func ForWrite(p unsafe.Pointer) { forWrite(p) }
