package prefetch

import "unsafe"

// forWrite is PREFETCHW (prefetch_amd64.s): the line in exclusive state,
// so the write that follows needs no ownership request of its own. CPUs
// without it (Intel before Broadwell) execute the encoding as a NOP.
//
//go:noescape
func forWrite(p unsafe.Pointer)
