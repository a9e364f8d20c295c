// Package testbed measures the ground a run stands on, as the durability
// study did by hand on every instance (dd, fsync p99): bounded sequential
// writes and small synchronous appends on the brokers' storage, and the
// node's CPU, memory and kernel. A slow disk is then seen in the results,
// not published as a broker's latency.
//
// The measurement (Probe) touches the disk; everything it computes from
// what it measured is pure (this file's helpers and host.go's parsers) and
// unit-tested.
package testbed

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/stats"
)

// Options bound the probe of one directory. Both tests stop at whichever
// comes first, their byte (or count) bound or their time bound, so a slow
// disk costs time, not an unbounded run.
type Options struct {
	// WriteBytes bounds the sequential write test (default 256 MiB).
	WriteBytes int64
	// BlockBytes is the size of each sequential write (default 1 MiB).
	BlockBytes int
	// WriteTime bounds the sequential write test (default 20 s).
	WriteTime time.Duration
	// Appends bounds the number of synchronous appends (default 2000).
	Appends int
	// AppendBytes is the size of each append (default 4 KiB: one page, a
	// journal's small entry).
	AppendBytes int
	// AppendTime bounds the append test (default 20 s).
	AppendTime time.Duration
}

// Defaults are the bounds of a probe: about 40 s and 256 MiB at most per
// volume.
func (o Options) withDefaults() Options {
	if o.WriteBytes <= 0 {
		o.WriteBytes = 256 << 20
	}
	if o.BlockBytes <= 0 {
		o.BlockBytes = 1 << 20
	}
	if o.WriteTime <= 0 {
		o.WriteTime = 20 * time.Second
	}
	if o.Appends <= 0 {
		o.Appends = 2000
	}
	if o.AppendBytes <= 0 {
		o.AppendBytes = 4096
	}
	if o.AppendTime <= 0 {
		o.AppendTime = 20 * time.Second
	}
	return o
}

// Probe measures one directory: sequential write throughput, then the
// latency of write+fdatasync appends. It writes only files of its own, in a
// temporary subdirectory it removes again, and needs no privileges.
func Probe(dir, name string, o Options) (v1alpha1.VolumeProbe, error) {
	o = o.withDefaults()
	out := v1alpha1.VolumeProbe{Name: name}
	if fi, err := os.Stat(dir); err != nil {
		return out, fmt.Errorf("probe %s: %w", dir, err)
	} else if !fi.IsDir() {
		return out, fmt.Errorf("probe %s: not a directory; give the brokers' data directory", dir)
	}
	tmp, err := os.MkdirTemp(dir, ".streambench-probe-")
	if err != nil {
		return out, fmt.Errorf("probe %s: %w (the probe needs write access to the directory)", dir, err)
	}
	defer os.RemoveAll(tmp)

	written, elapsed, err := sequentialWrite(filepath.Join(tmp, "sequential"), o)
	if err != nil {
		return out, err
	}
	// The file goes before the append test, so the appends run on a disk
	// that is not still writing it back.
	_ = os.Remove(filepath.Join(tmp, "sequential"))
	out.WriteBytes = written
	out.WriteMBPerSec = MBPerSec(written, elapsed)

	h, err := appends(filepath.Join(tmp, "appends"), o)
	if err != nil {
		return out, err
	}
	out.FsyncLatencyMs = FsyncSummary(h, int64(o.AppendBytes))
	return out, nil
}

// sequentialWrite writes blocks until the byte or time bound, then
// fdatasyncs: like `dd bs=1M conv=fdatasync`, the time includes getting
// the bytes to the device, not only into the page cache.
func sequentialWrite(path string, o Options) (int64, time.Duration, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	block := make([]byte, o.BlockBytes)
	// Not zeros: a compressing or deduplicating device would make zeros
	// look fast.
	fill(block)
	var written int64
	start := time.Now()
	deadline := start.Add(o.WriteTime)
	for written < o.WriteBytes && time.Now().Before(deadline) {
		n, err := f.Write(block[:min(int64(len(block)), o.WriteBytes-written)])
		written += int64(n)
		if err != nil {
			return written, time.Since(start), fmt.Errorf("sequential write after %d bytes: %w", written, err)
		}
	}
	if err := fdatasync(f); err != nil {
		return written, time.Since(start), fmt.Errorf("fdatasync: %w", err)
	}
	return written, time.Since(start), nil
}

// appends times each write+fdatasync of AppendBytes on a growing file, as a
// journal (BookKeeper's, or Kafka's log with flush.messages=1) does.
func appends(path string, o Options) (*stats.Histogram, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, o.AppendBytes)
	fill(buf)
	h := stats.NewHistogram()
	deadline := time.Now().Add(o.AppendTime)
	for i := 0; i < o.Appends && time.Now().Before(deadline); i++ {
		t0 := time.Now()
		if _, err := f.Write(buf); err != nil {
			return h, fmt.Errorf("append %d: %w", i, err)
		}
		if err := fdatasync(f); err != nil {
			return h, fmt.Errorf("fdatasync of append %d: %w", i, err)
		}
		h.Record(time.Since(t0))
	}
	if h.Count() == 0 {
		return h, errors.New("no append finished within the time bound")
	}
	return h, nil
}

func fill(b []byte) {
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
}

// MBPerSec is bytes over elapsed time in MB/s of 10^6 bytes (the unit of
// the results and of the source studies' (docs/methodology.md) tables); 0 for no time.
func MBPerSec(bytes int64, elapsed time.Duration) float64 {
	if elapsed <= 0 {
		return 0
	}
	return round(float64(bytes)/1e6/elapsed.Seconds(), 1)
}

// FsyncSummary turns the appends' histogram (µs) into milliseconds.
func FsyncSummary(h *stats.Histogram, appendBytes int64) v1alpha1.FsyncLatency {
	q := h.Quantiles()
	ms := func(us int64) float64 { return round(float64(us)/1000, 3) }
	return v1alpha1.FsyncLatency{
		Count: q.Count, AppendBytes: appendBytes,
		P50: ms(q.P50), P99: ms(q.P99), P999: ms(q.P999), Max: ms(q.Max),
	}
}

// SlowestFsyncP99 is the highest append p99 over every volume of every
// node: the disk that bounds a journal's latency. ok is false when no
// volume was measured.
func SlowestFsyncP99(nodes []v1alpha1.NodeProbe) (ms float64, node string, ok bool) {
	for _, n := range nodes {
		for _, v := range n.Volumes {
			if v.FsyncLatencyMs.Count == 0 {
				continue
			}
			if !ok || v.FsyncLatencyMs.P99 > ms {
				ms, node, ok = v.FsyncLatencyMs.P99, n.Node, true
			}
		}
	}
	return ms, node, ok
}

// SlowestWriteMBPerSec is the lowest sequential write rate over every
// measured volume.
func SlowestWriteMBPerSec(nodes []v1alpha1.NodeProbe) (mbps float64, ok bool) {
	for _, n := range nodes {
		for _, v := range n.Volumes {
			if v.WriteBytes == 0 {
				continue
			}
			if !ok || v.WriteMBPerSec < mbps {
				mbps, ok = v.WriteMBPerSec, true
			}
		}
	}
	return mbps, ok
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}
