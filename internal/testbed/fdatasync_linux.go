package testbed

import (
	"os"
	"syscall"
)

// fdatasync is what a journal calls: data and the metadata needed to read
// it back (the file size), not the timestamps.
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
