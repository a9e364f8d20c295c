//go:build !linux

package worker

import "time"

// sleepHoldingP is time.Sleep where nanosleep(2) and the P-holding sleep are
// not used; the worker runs on Linux (punctual_linux.go).
func sleepHoldingP(d time.Duration) { time.Sleep(d) }

func shortSlice() (restore func()) { return func() {} }
