package worker

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// gcPercent is the worker process's GOGC unless the environment sets one.
// Its live heap is small (histograms, in-flight payloads, client buffers),
// and at the default of 100 the collector ran every few megabytes of
// fetched and sent messages: GC marking was ~10 % of the worker's CPU
// profile at 20k msg/s of 1 KiB. 400 collects a quarter as often for a few
// tens of megabytes more. (One A/B of whole-process CPU, GOGC 100 vs 400,
// differed by less than the run-to-run spread; hack/bench-omb measures it.)
const gcPercent = 400

// memoryLimitShare of the container's memory limit is the soft limit the
// collector works harder under, so a larger GOGC cannot grow a big live heap
// (a catch-up run's fetch buffers) past the pod's limit.
const memoryLimitShare = 0.8

// RuntimeSettings are the collector settings of a dedicated worker process.
type RuntimeSettings struct {
	// GCPercent is the GOGC to set; 0 leaves it as it is.
	GCPercent int
	// MemoryLimit is the soft memory limit in bytes; 0 leaves it.
	MemoryLimit int64
}

// runtimeSettingsFor decides the settings from the environment (GOGC and
// GOMEMLIMIT set by the user win) and the cgroup v2 memory.max content ("max"
// or a byte count; empty when unreadable).
func runtimeSettingsFor(getenv func(string) string, cgroupMemoryMax string) RuntimeSettings {
	var s RuntimeSettings
	if getenv("GOGC") == "" {
		s.GCPercent = gcPercent
	}
	if getenv("GOMEMLIMIT") == "" {
		if limit, err := strconv.ParseInt(strings.TrimSpace(cgroupMemoryMax), 10, 64); err == nil && limit > 0 {
			s.MemoryLimit = int64(float64(limit) * memoryLimitShare)
		}
	}
	return s
}

// TuneRuntime applies runtimeSettingsFor to this process and returns what it
// set. Call it once, from a process that only runs a worker.
func TuneRuntime() RuntimeSettings {
	max, _ := os.ReadFile("/sys/fs/cgroup/memory.max")
	s := runtimeSettingsFor(os.Getenv, string(max))
	if s.GCPercent > 0 {
		debug.SetGCPercent(s.GCPercent)
	}
	if s.MemoryLimit > 0 {
		debug.SetMemoryLimit(s.MemoryLimit)
	}
	return s
}
