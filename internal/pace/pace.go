// Package pace is how a load generator's sender sleeps until a message is
// due on this kind of machine: what a wake costs and how late it comes set
// the floor under a load generator's CPU per message and its send delay.
// The worker's pacer (internal/worker) and the bare-client floor of
// hack/floor use the same sleeps and the same wake rules, so what lies
// between them is the worker's own work, not a different way of sleeping.
package pace

import "time"

const (
	// EarlySend: a message due sooner than this is sent at once, a hair
	// early (its recorded send delay is then 0), as a sleep this short costs
	// more than it saves.
	EarlySend = 50 * time.Microsecond
	// MinWake: a sender wakes from a precise sleep at most this often; the
	// messages that fall due meanwhile go out together when it wakes, late
	// by less than MinWake, and that lateness is recorded as send delay like
	// any other. A wake costs ~24 µs of CPU on this VM (BenchmarkWake; a C
	// loop of clock_nanosleep costs the same), so per-message wakes at 20k
	// msg/s would cost half a core: at 20k msg/s, 200 µs cost 13.1 CPU-s
	// per million messages, 400 µs 12.2 and 1 ms 10.6, with send delay p99
	// 0.9, 1.1 and 1.6 ms.
	MinWake = 400 * time.Microsecond
)
