// Package stats holds the measurements of a benchmark: latency histograms,
// message counters, the per-interval Snapshot a worker hands to the
// coordinator, the worker-side Store that makes that hand-over safe to retry,
// and the aggregation helpers (phase aggregate, time series, quantiles).
//
// Every latency is kept in microseconds in an HdrHistogram with 3 significant
// digits from 1 µs to MaxLatency (10 minutes). OMB caps its histograms at
// 60 s and silently drops what does not fit, which hides exactly the stalls a
// benchmark should show; here a value above MaxLatency is recorded as
// MaxLatency and counted in Overflow, and a negative value (end-to-end latency
// under clock skew, OMB issue #216) is recorded as 0 and counted in Negative,
// so no sample is ever dropped.
package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

const (
	// MaxLatency is the largest latency a histogram resolves. Ten minutes
	// leaves room above the "at least five minutes" a broker stall or a
	// catch-up read of an old backlog can reach; the cost over 60 s is two
	// more buckets (about 16 KiB per dense histogram).
	MaxLatency = 10 * time.Minute
	// MaxLatencyMicros is MaxLatency in the histograms' unit.
	MaxLatencyMicros = int64(MaxLatency / time.Microsecond)
	// SignificantDigits is the histograms' precision: values are kept within
	// 0.1%, so a p99 of 12.345 ms is told apart from 12.36 ms. Two digits
	// would shrink a dense histogram from ~172 KiB to ~24 KiB, but the
	// Recorder keeps at most a few dozen dense histograms per worker and
	// snapshots are stored sparse, so the size does not force it.
	SignificantDigits = 3
	// lowestMicros is the smallest distinguishable latency: 1 µs.
	lowestMicros = 1
)

// Histogram is a latency distribution in microseconds. It is stored sparse
// (only populated buckets), so a Snapshot of a mostly idle interval is
// small. The zero value and a nil *Histogram are empty histograms for every
// read method. A Histogram is not safe for concurrent mutation: hot paths
// record through a Recorder.
type Histogram struct {
	h *hdr.PackedHistogram
	// overflow counts values above MaxLatencyMicros, recorded as MaxLatencyMicros.
	overflow int64
	// negative counts values below 0, recorded as 0.
	negative int64
}

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram { return &Histogram{} }

func newPacked() *hdr.PackedHistogram {
	return hdr.NewPacked(lowestMicros, MaxLatencyMicros, SignificantDigits)
}

func newDense() *hdr.Histogram {
	return hdr.New(lowestMicros, MaxLatencyMicros, SignificantDigits)
}

// clamp maps v into [0, MaxLatencyMicros] and says which bound it hit.
func clamp(v int64) (clamped int64, over, neg bool) {
	switch {
	case v < 0:
		return 0, false, true
	case v > MaxLatencyMicros:
		return MaxLatencyMicros, true, false
	}
	return v, false, false
}

// RecordMicros records one latency in microseconds (clamped, see Overflow
// and Negative).
func (h *Histogram) RecordMicros(v int64) {
	if h.h == nil {
		h.h = newPacked()
	}
	v, over, neg := clamp(v)
	if over {
		h.overflow++
	}
	if neg {
		h.negative++
	}
	// Cannot fail: v is in range and a total past MaxInt64 is unreachable.
	_ = h.h.RecordValue(v)
}

// Record records one latency.
func (h *Histogram) Record(d time.Duration) { h.RecordMicros(d.Microseconds()) }

// Count is the number of recorded values, overflowed and negative ones
// included.
func (h *Histogram) Count() int64 {
	if h == nil || h.h == nil {
		return 0
	}
	return h.h.TotalCount()
}

// Overflow is how many values were above MaxLatency (recorded as MaxLatency).
func (h *Histogram) Overflow() int64 {
	if h == nil {
		return 0
	}
	return h.overflow
}

// Negative is how many values were below zero (recorded as 0); for
// end-to-end latency this is a sign of clock skew between workers.
func (h *Histogram) Negative() int64 {
	if h == nil {
		return 0
	}
	return h.negative
}

// Merge adds every value of o to h. The result is exactly the histogram of
// all values recorded into either: both have the same geometry, so buckets
// add index to index.
func (h *Histogram) Merge(o *Histogram) {
	if o == nil || o.h == nil {
		return
	}
	if h.h == nil {
		h.h = newPacked()
	}
	h.h.Merge(o.h)
	h.overflow += o.overflow
	h.negative += o.negative
}

// mergeDense adds a dense histogram (a Recorder shard's) into h.
func (h *Histogram) mergeDense(d *hdr.Histogram, overflow, negative int64) {
	if d == nil || d.TotalCount() == 0 {
		h.overflow += overflow
		h.negative += negative
		return
	}
	if h.h == nil {
		h.h = newPacked()
	}
	h.h.MergeFrom(d)
	h.overflow += overflow
	h.negative += negative
}

// Clone returns an independent copy.
func (h *Histogram) Clone() *Histogram {
	if h == nil {
		return &Histogram{}
	}
	c := &Histogram{overflow: h.overflow, negative: h.negative}
	if h.h != nil {
		c.h = h.h.Clone()
	}
	return c
}

// Equal reports whether h and o hold the same counts in the same buckets
// (and the same overflow and negative counts).
func (h *Histogram) Equal(o *Histogram) bool {
	if h.Count() != o.Count() || h.Overflow() != o.Overflow() || h.Negative() != o.Negative() {
		return false
	}
	a, b := h.buckets(), o.buckets()
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// buckets lists (value, count) of every populated bucket, ascending.
func (h *Histogram) buckets() [][2]int64 {
	if h == nil || h.h == nil {
		return nil
	}
	var out [][2]int64
	h.h.ForEachBucket(func(v, c int64) bool {
		out = append(out, [2]int64{v, c})
		return true
	})
	return out
}

// ValueAtPercentile is the value (µs) at percentile p (0..100); 0 when empty.
func (h *Histogram) ValueAtPercentile(p float64) int64 {
	if h.Count() == 0 {
		return 0
	}
	return h.h.ValueAtPercentile(p)
}

// Mean is the average in microseconds (from bucket midpoints, so within the
// histogram's 0.1% precision); 0 when empty.
func (h *Histogram) Mean() float64 {
	if h.Count() == 0 {
		return 0
	}
	return h.h.Mean()
}

// Max is the largest value in microseconds (its bucket's highest equivalent
// value); 0 when empty.
func (h *Histogram) Max() int64 {
	if h.Count() == 0 {
		return 0
	}
	return h.h.Max()
}

// Packed returns a copy of the underlying HdrHistogram, e.g. to write an
// HdrHistogram log with hdrhistogram-go's HistogramLogWriter.
func (h *Histogram) Packed() *hdr.PackedHistogram {
	if h == nil || h.h == nil {
		return newPacked()
	}
	return h.h.Clone()
}

// Encode returns the standard HdrHistogram V2 compressed encoding, base64 —
// what OMB sends between its workers and what HdrHistogram tools read.
func (h *Histogram) Encode() (string, error) {
	p := newPacked()
	if h != nil && h.h != nil {
		p = h.h
	}
	b, err := p.Encode()
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHistogram reads what Encode wrote. It refuses a histogram of another
// geometry, which only a worker of another streambench version can send: its
// buckets would not merge exactly.
func DecodeHistogram(s string) (*Histogram, error) {
	p, err := hdr.DecodePacked([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	if p.LowestTrackableValue() != lowestMicros || p.HighestTrackableValue() < MaxLatencyMicros ||
		p.SignificantFigures() != SignificantDigits {
		return nil, fmt.Errorf("decode histogram: geometry %d..%d µs with %d digits differs from %d..%d µs with %d digits; run the same streambench version on workers and coordinator",
			p.LowestTrackableValue(), p.HighestTrackableValue(), p.SignificantFigures(),
			lowestMicros, MaxLatencyMicros, SignificantDigits)
	}
	h := &Histogram{}
	if p.TotalCount() > 0 {
		h.h = p
	}
	return h, nil
}

// histogramJSON is the wire form of a Histogram.
type histogramJSON struct {
	// HDR is the HdrHistogram V2 compressed encoding, base64.
	HDR string `json:"hdr,omitempty"`
	// Overflow and Negative are the clamped counts (see Histogram).
	Overflow int64 `json:"overflow,omitempty"`
	Negative int64 `json:"negative,omitempty"`
}

// MarshalJSON writes {"hdr": base64 V2, "overflow": n, "negative": n}; an
// empty histogram is {}.
func (h *Histogram) MarshalJSON() ([]byte, error) {
	var w histogramJSON
	if h.Count() > 0 {
		s, err := h.Encode()
		if err != nil {
			return nil, err
		}
		w.HDR = s
	}
	w.Overflow, w.Negative = h.Overflow(), h.Negative()
	return json.Marshal(w)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (h *Histogram) UnmarshalJSON(b []byte) error {
	var w histogramJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*h = Histogram{overflow: w.Overflow, negative: w.Negative}
	if w.HDR == "" {
		return nil
	}
	d, err := DecodeHistogram(w.HDR)
	if err != nil {
		return err
	}
	h.h = d.h
	return nil
}

// Quantiles is the usual summary of a latency distribution, in
// microseconds (OMB's publish delay unit; divide by 1000 for milliseconds).
type Quantiles struct {
	Count int64   `json:"count"`
	Avg   float64 `json:"avg"`
	P50   int64   `json:"p50"`
	P75   int64   `json:"p75"`
	P95   int64   `json:"p95"`
	P99   int64   `json:"p99"`
	P999  int64   `json:"p999"`
	P9999 int64   `json:"p9999"`
	Max   int64   `json:"max"`
	// Overflow counts values above MaxLatency; when it is not zero, Max and
	// the high percentiles are at least, not exactly, the values shown.
	Overflow int64 `json:"overflow,omitempty"`
	// Negative counts values below zero (clock skew, for end-to-end).
	Negative int64 `json:"negative,omitempty"`
}

// Quantiles summarises h.
func (h *Histogram) Quantiles() Quantiles {
	if h.Count() == 0 {
		return Quantiles{Overflow: h.Overflow(), Negative: h.Negative()}
	}
	v := h.h.ValueAtPercentilesSlice([]float64{50, 75, 95, 99, 99.9, 99.99})
	return Quantiles{
		Count: h.Count(), Avg: h.Mean(),
		P50: v[0], P75: v[1], P95: v[2], P99: v[3], P999: v[4], P9999: v[5],
		Max: h.Max(), Overflow: h.overflow, Negative: h.negative,
	}
}

// CurvePoint is one point of a quantile curve.
type CurvePoint struct {
	// Percentile in 0..100.
	Percentile float64 `json:"percentile"`
	// Micros is the latency at that percentile.
	Micros int64 `json:"micros"`
}

// CurvePercentiles are the percentiles of Curve: dense in the tail, where
// latency charts are read (the same spirit as OMB's quantile maps, which
// step by 1 up to 90 and then by ever smaller steps towards 100).
func CurvePercentiles() []float64 {
	var ps []float64
	for p := 1.0; p <= 90; p++ {
		ps = append(ps, p)
	}
	// 90, 99, 99.9, ... each decade of "nines" in 10 steps.
	for gap := 10.0; gap >= 0.0001-1e-12; gap /= 10 {
		for i := 1; i <= 9; i++ {
			p := 100 - gap + float64(i)*gap/10
			ps = append(ps, math.Round(p*1e6)/1e6)
		}
	}
	return append(ps, 100)
}

// Curve is the quantile curve (percentile -> µs) at CurvePercentiles; nil
// when empty.
func (h *Histogram) Curve() []CurvePoint {
	if h.Count() == 0 {
		return nil
	}
	ps := CurvePercentiles()
	vs := h.h.ValueAtPercentilesSlice(ps)
	out := make([]CurvePoint, len(ps))
	for i := range ps {
		out[i] = CurvePoint{Percentile: ps[i], Micros: vs[i]}
	}
	return out
}

// ForEachBucket calls f with the value (µs, the bucket's highest
// equivalent value) and count of every populated bucket, ascending: e.g.
// to lay the histogram out in Prometheus buckets.
func (h *Histogram) ForEachBucket(f func(micros, count int64)) {
	for _, b := range h.buckets() {
		f(b[0], b[1])
	}
}
