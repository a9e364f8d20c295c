//go:build !linux

package pace

import "time"

// SleepHoldingP is time.Sleep where nanosleep(2) and the P-holding sleep are
// not used; the worker runs on Linux (pace_linux.go).
func SleepHoldingP(d time.Duration) { time.Sleep(d) }

// Punctual changes nothing where the Linux settings do not exist.
func Punctual() (restore func()) { return func() {} }
