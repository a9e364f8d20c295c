//go:build !amd64

package prefetch

import "unsafe"

func forWrite(unsafe.Pointer) {}
