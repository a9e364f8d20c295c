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
	// Rounds splits each test into this many equal rounds (default 4),
	// whose figures show how much the disk varies by itself.
	Rounds int
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
	if o.Rounds <= 0 {
		o.Rounds = 4
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

	// Each test in rounds, each round a share of its bounds: one probe
	// shows how far the disk's figures move by themselves (on this
	// project's 2-core VMs, a disk's fsync p50 moved 1.8x and its write
	// rate 1.5x between probes a few seconds apart).
	round := func(r int) Options {
		ro := o
		ro.WriteBytes, ro.WriteTime = share(o.WriteBytes, o.Rounds, r), o.WriteTime/time.Duration(o.Rounds)
		ro.Appends, ro.AppendTime = int(share(int64(o.Appends), o.Rounds, r)), o.AppendTime/time.Duration(o.Rounds)
		return ro
	}
	var (
		written int64
		elapsed time.Duration
	)
	for r := range o.Rounds {
		w, e, err := sequentialWrite(filepath.Join(tmp, "sequential"), round(r))
		if err != nil {
			return out, err
		}
		// The file goes before the next round and the append test, so
		// they run on a disk that is not still writing it back.
		_ = os.Remove(filepath.Join(tmp, "sequential"))
		written, elapsed = written+w, elapsed+e
		out.WriteRoundsMBPerSec = append(out.WriteRoundsMBPerSec, MBPerSec(w, e))
	}
	out.WriteBytes = written
	out.WriteMBPerSec = MBPerSec(written, elapsed)

	all := stats.NewHistogram()
	var rounds []float64
	for r := range o.Rounds {
		h, err := appends(filepath.Join(tmp, fmt.Sprintf("appends-%d", r)), round(r))
		if err != nil {
			return out, err
		}
		all.Merge(h)
		rounds = append(rounds, FsyncSummary(h, int64(o.AppendBytes)).P50)
	}
	out.FsyncLatencyMs = FsyncSummary(all, int64(o.AppendBytes))
	out.FsyncLatencyMs.RoundP50s = rounds
	return out, nil
}

// share is round r's part of total split over rounds: equal, the
// remainder to the first rounds, so the parts add up to total.
func share(total int64, rounds, r int) int64 {
	n := total / int64(rounds)
	if int64(r) < total%int64(rounds) {
		n++
	}
	return n
}

// Spread is how far apart the largest and the smallest of vs are, as
// their ratio (1 = no spread); 1 for fewer than two positive values.
func Spread(vs []float64) float64 {
	lo, hi := math.Inf(1), 0.0
	for _, v := range vs {
		if v > 0 {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if hi == 0 || lo == hi {
		return 1
	}
	return hi / lo
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

// SlowestFsync is the append latency of the volume with the highest
// median over every measured volume, and its node.
func SlowestFsync(nodes []v1alpha1.NodeProbe) (l v1alpha1.FsyncLatency, node string, ok bool) {
	for _, n := range nodes {
		for _, v := range n.Volumes {
			if v.FsyncLatencyMs.Count > 0 && (!ok || v.FsyncLatencyMs.P50 > l.P50) {
				l, node, ok = v.FsyncLatencyMs, n.Node, true
			}
		}
	}
	return l, node, ok
}

// SlowestWrite is the volume with the lowest sequential write rate over
// every measured volume.
func SlowestWrite(nodes []v1alpha1.NodeProbe) (v v1alpha1.VolumeProbe, ok bool) {
	for _, n := range nodes {
		for _, vol := range n.Volumes {
			if vol.WriteBytes > 0 && (!ok || vol.WriteMBPerSec < v.WriteMBPerSec) {
				v, ok = vol, true
			}
		}
	}
	return v, ok
}

// SlowestWriteMBPerSec is the lowest sequential write rate over every
// measured volume.
func SlowestWriteMBPerSec(nodes []v1alpha1.NodeProbe) (mbps float64, ok bool) {
	v, ok := SlowestWrite(nodes)
	return v.WriteMBPerSec, ok
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}
