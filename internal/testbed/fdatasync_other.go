//go:build !linux

package testbed

import "os"

// fdatasync falls back to fsync where the system has no fdatasync; it
// syncs more (timestamps), so the figures are an upper bound.
func fdatasync(f *os.File) error { return f.Sync() }
