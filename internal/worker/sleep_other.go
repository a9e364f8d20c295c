//go:build !linux

package worker

import "time"

// sleepPrecisely is time.Sleep where nanosleep(2) is not used; the worker
// runs on Linux, where sleep_linux.go keeps the sleeps short.
func sleepPrecisely(d time.Duration) { time.Sleep(d) }
