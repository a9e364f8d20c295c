package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestHistogramClampsInsteadOfDropping(t *testing.T) {
	h := NewHistogram()
	h.RecordMicros(-5)                   // clock skew
	h.RecordMicros(0)                    // same microsecond
	h.Record(90 * time.Second)           // above OMB's 60 s cap, within ours
	h.Record(MaxLatency + time.Hour)     // beyond ours
	h.RecordMicros(MaxLatencyMicros + 1) // just beyond
	if got := h.Count(); got != 5 {
		t.Fatalf("Count = %d, want 5 (no sample dropped)", got)
	}
	if h.Overflow() != 2 || h.Negative() != 1 {
		t.Fatalf("Overflow, Negative = %d, %d; want 2, 1", h.Overflow(), h.Negative())
	}
	if max := h.Max(); float64(max) < float64(MaxLatencyMicros)*0.999 {
		t.Fatalf("Max = %d µs, want ~%d (clamped to MaxLatency)", max, MaxLatencyMicros)
	}
	if v := h.ValueAtPercentile(40); v != 0 {
		t.Fatalf("p40 = %d, want 0 (negative and zero samples are the lowest two of five)", v)
	}
	if v := h.ValueAtPercentile(60); math.Abs(float64(v)-90e6)/90e6 > 0.001 {
		t.Fatalf("p60 = %d µs, want 90 s within 0.1%%", v)
	}
}

func TestQuantilesOfKnownDistribution(t *testing.T) {
	h := NewHistogram()
	for v := int64(1); v <= 100000; v++ {
		h.RecordMicros(v)
	}
	q := h.Quantiles()
	want := map[string][2]float64{
		"avg": {q.Avg, 50000.5}, "p50": {float64(q.P50), 50000}, "p75": {float64(q.P75), 75000},
		"p95": {float64(q.P95), 95000}, "p99": {float64(q.P99), 99000}, "p99.9": {float64(q.P999), 99900},
		"p99.99": {float64(q.P9999), 99990}, "max": {float64(q.Max), 100000},
	}
	for name, gw := range want {
		if rel := math.Abs(gw[0]-gw[1]) / gw[1]; rel > 0.001 {
			t.Errorf("%s = %v, want %v within 0.1%% (3 significant digits)", name, gw[0], gw[1])
		}
	}
	if q.Count != 100000 {
		t.Errorf("Count = %d, want 100000", q.Count)
	}
	if empty := NewHistogram().Quantiles(); empty != (Quantiles{}) {
		t.Errorf("empty Quantiles = %+v, want zero", empty)
	}
	var nilH *Histogram
	if nilH.Count() != 0 || nilH.Quantiles().Max != 0 || nilH.Curve() != nil {
		t.Errorf("nil histogram is not an empty histogram")
	}
}

func TestCurveIsMonotoneAndEndsAtMax(t *testing.T) {
	h := NewHistogram()
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		h.RecordMicros(int64(r.ExpFloat64() * 2000))
	}
	c := h.Curve()
	if len(c) != len(CurvePercentiles()) {
		t.Fatalf("curve has %d points, want %d", len(c), len(CurvePercentiles()))
	}
	for i := 1; i < len(c); i++ {
		if c[i].Percentile <= c[i-1].Percentile {
			t.Fatalf("percentiles not increasing at %d: %v then %v", i, c[i-1].Percentile, c[i].Percentile)
		}
		if c[i].Micros < c[i-1].Micros {
			t.Fatalf("values decrease at p%v: %d then %d", c[i].Percentile, c[i-1].Micros, c[i].Micros)
		}
	}
	last := c[len(c)-1]
	if last.Percentile != 100 || last.Micros != h.Max() {
		t.Fatalf("last point = %+v, want p100 = max %d", last, h.Max())
	}
	for _, p := range []float64{50, 90, 99, 99.9, 99.99, 99.999} {
		found := false
		for _, pt := range c {
			if pt.Percentile == p {
				found = true
			}
		}
		if !found {
			t.Errorf("curve lacks p%v", p)
		}
	}
}

func TestHistogramJSONRoundTrip(t *testing.T) {
	h := NewHistogram()
	for i := int64(0); i < 5000; i++ {
		h.RecordMicros(i * i % 7919 * 13)
	}
	h.RecordMicros(-1)
	h.Record(time.Hour)
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"hdr":"HIST`) {
		t.Fatalf("JSON %s... does not carry HdrHistogram V2 base64", b[:40])
	}
	var back Histogram
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !back.Equal(h) {
		t.Fatalf("round trip changed the histogram: %+v vs %+v", back.Quantiles(), h.Quantiles())
	}
	b, _ = json.Marshal(NewHistogram())
	if string(b) != "{}" {
		t.Fatalf("empty histogram JSON = %s, want {}", b)
	}
}

func TestDecodeRefusesOtherGeometry(t *testing.T) {
	other := hdr.New(1, 60_000_000, 2) // OMB-like cap, other precision
	_ = other.RecordValue(1000)
	b, err := other.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	_, err = DecodeHistogram(string(b))
	if err == nil || !strings.Contains(err.Error(), "same streambench version") {
		t.Fatalf("err = %v, want a geometry error naming the fix", err)
	}
	if _, err := DecodeHistogram("not base64!"); err == nil {
		t.Fatal("garbage decoded without error")
	}
}

// workerLoad is what one simulated worker records: producer and consumer
// samples with known values, so the expected histograms can be built apart.
type sample struct {
	sendDelay, publish time.Duration
	e2e                time.Duration
	catchUp            bool
	bytes              int
}

func genSamples(seed uint64, n int) []sample {
	r := rand.New(rand.NewPCG(seed, seed*7+1))
	out := make([]sample, n)
	for i := range out {
		out[i] = sample{
			sendDelay: time.Duration(r.ExpFloat64()*50) * time.Microsecond,
			publish:   time.Duration(500+r.ExpFloat64()*3000) * time.Microsecond,
			e2e:       time.Duration(r.NormFloat64()*4000+8000) * time.Microsecond, // some negative
			catchUp:   r.IntN(4) == 0,
			bytes:     100 + r.IntN(900),
		}
		if r.IntN(5000) == 0 {
			out[i].publish = 11 * time.Minute // a stall beyond MaxLatency
		}
	}
	return out
}

// record plays samples into rec from several goroutines (as ack and receive
// callbacks would), while cutting intervals into store. Every other
// goroutine records its sends into a shard of its own (OwnShard), as the
// worker's senders do, and the others their acks into the shard their
// number maps to (ShardFor), as producers do, so those shards are cut and
// merged with the rest.
func record(t *testing.T, rec *Recorder, store *Store, samples []sample, goroutines int, now *time.Time, mu *sync.Mutex) {
	t.Helper()
	subs := [2]*SubscriptionRecorder{rec.Subscription("tail", false), rec.Subscription("catch", true)}
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			recordSend, recordAck := rec.RecordSend, rec.RecordAck
			if g%2 == 0 {
				recordSend = rec.OwnShard().RecordSend
			} else {
				recordAck = rec.ShardFor(uint32(g)).RecordAck
			}
			for i := g; i < len(samples); i += goroutines {
				s := samples[i]
				intended := t0.Add(time.Duration(i) * time.Millisecond)
				sent := intended.Add(s.sendDelay)
				recordSend(intended, sent, s.bytes)
				if i%97 == 0 {
					rec.RecordPublishError()
					continue
				}
				recordAck(intended, sent, sent.Add(s.publish), s.bytes)
				sub := subs[0]
				if s.catchUp {
					sub = subs[1]
				}
				sub.RecordReceive(sent, sent.Add(s.e2e), s.bytes)
			}
		}(g)
	}
	// Cut concurrently with recording: nothing may fall between intervals.
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for {
		select {
		case <-done:
			mu.Lock()
			*now = now.Add(10 * time.Second)
			store.Append(rec.Cut(*now))
			mu.Unlock()
			return
		default:
			mu.Lock()
			*now = now.Add(10 * time.Second)
			store.Append(rec.Cut(*now))
			mu.Unlock()
			time.Sleep(200 * time.Microsecond)
		}
	}
}

// TestMergeAcrossWorkersIsExact records samples on three workers
// concurrently, moves their snapshots through JSON (as the HTTP transfer
// does), merges them, and checks the merge equals the histogram of all
// samples recorded in one place, bucket for bucket, and that no count is
// lost.
func TestMergeAcrossWorkersIsExact(t *testing.T) {
	want := struct {
		pub, delay, corr, e2e, catchE2E *Histogram
		sent, acked, errs, sentB, ackB  int64
		recv                            map[string]int64
	}{NewHistogram(), NewHistogram(), NewHistogram(), NewHistogram(), NewHistogram(), 0, 0, 0, 0, 0, map[string]int64{}}

	var all []Snapshot
	for w := 0; w < 3; w++ {
		samples := genSamples(uint64(w+1), 30000)
		for i, s := range samples {
			want.sent++
			want.sentB += int64(s.bytes)
			want.delay.Record(s.sendDelay)
			if i%97 == 0 {
				want.errs++
				continue
			}
			want.acked++
			want.ackB += int64(s.bytes)
			want.pub.Record(s.publish)
			want.corr.Record(s.sendDelay + s.publish)
			if s.catchUp {
				want.catchE2E.Record(s.e2e)
				want.recv["catch"]++
			} else {
				want.e2e.Record(s.e2e)
				want.recv["tail"]++
			}
		}
		rec := NewRecorder(fmt.Sprintf("worker-%d", w), PhaseMeasure, t0)
		store := NewStore()
		now := t0
		var mu sync.Mutex
		record(t, rec, store, samples, 8, &now, &mu)
		if store.Len() < 2 {
			t.Fatalf("worker %d: only %d intervals; the test must cut while recording", w, store.Len())
		}
		for _, s := range store.After(0) {
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			var back Snapshot
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			all = append(all, back)
		}
	}

	m := Aggregate(all, PhaseMeasure)
	checks := []struct {
		name      string
		got, want *Histogram
	}{
		{"publish latency", m.Producer.PublishLatency, want.pub},
		{"send delay", m.Producer.SendDelay, want.delay},
		{"corrected latency", m.Producer.CorrectedLatency, want.corr},
		{"end-to-end", m.Consumer.EndToEnd, want.e2e},
		{"catch-up end-to-end", m.Consumer.CatchUpEndToEnd, want.catchE2E},
	}
	for _, c := range checks {
		if !c.got.Equal(c.want) {
			t.Errorf("%s: merged %+v != all samples %+v", c.name, c.got.Quantiles(), c.want.Quantiles())
		}
	}
	if want.pub.Overflow() == 0 || want.e2e.Negative() == 0 {
		t.Fatalf("test data must exercise overflow and negative values")
	}
	p := m.Producer
	if p.Sent != want.sent || p.Acked != want.acked || p.PublishErrors != want.errs || p.SentBytes != want.sentB || p.AckedBytes != want.ackB {
		t.Errorf("producer counters %+v, want sent %d acked %d errors %d bytes %d/%d", p, want.sent, want.acked, want.errs, want.sentB, want.ackB)
	}
	for name, n := range want.recv {
		if got := m.Consumer.Subscriptions[name].Received; got != n {
			t.Errorf("subscription %s received %d, want %d", name, got, n)
		}
	}
	if !m.Consumer.Subscriptions["catch"].CatchUp || m.Consumer.Subscriptions["tail"].CatchUp {
		t.Errorf("catch-up flags lost in merge: %+v", m.Consumer.Subscriptions)
	}
	if m.Workers != 3 || m.Worker != "" || m.Phase != PhaseMeasure {
		t.Errorf("merge Workers=%d Worker=%q Phase=%q, want 3, \"\", measure", m.Workers, m.Worker, m.Phase)
	}
	if tot := m.Consumer.Total().Received; tot != want.acked {
		t.Errorf("total received %d, want %d", tot, want.acked)
	}
}

func TestMergeElapsedAndSeries(t *testing.T) {
	mk := func(worker string, phase Phase, index int, start time.Time, d time.Duration, acked int64) Snapshot {
		return Snapshot{Worker: worker, Workers: 1, Phase: phase, Index: index, Start: start, End: start.Add(d), Elapsed: d,
			Producer: Producer{Acked: acked}}
	}
	var snaps []Snapshot
	for _, w := range []string{"a", "b"} {
		skew := time.Duration(0)
		if w == "b" {
			skew = 30 * time.Millisecond // b's wall clock runs ahead
		}
		snaps = append(snaps, mk(w, PhaseWarmup, 0, t0.Add(skew), 10*time.Second, 1))
		for i := 0; i < 6; i++ {
			snaps = append(snaps, mk(w, PhaseMeasure, i, t0.Add(10*time.Second+time.Duration(i)*10*time.Second+skew), 10*time.Second, 1000))
		}
	}
	agg := Aggregate(snaps, PhaseMeasure)
	if agg.Elapsed != 60*time.Second {
		t.Fatalf("phase aggregate Elapsed = %v, want 60s (per worker sum, longest over workers)", agg.Elapsed)
	}
	// A worker that saw only a sliver of the phase (here one 5 ms cut at
	// the boundary) must not shorten it: the mean of 60 s and 5 ms would
	// halve Elapsed and double the rate.
	sliver := append(append([]Snapshot(nil), snaps...), mk("c", PhaseMeasure, 6, t0.Add(70*time.Second), 5*time.Millisecond, 0))
	if got := Aggregate(sliver, PhaseMeasure); got.Elapsed != 60*time.Second || got.Workers != 3 {
		t.Fatalf("with a sliver worker: Elapsed = %v, Workers = %d; want 60s, 3", got.Elapsed, got.Workers)
	}
	if r := agg.Rate(agg.Producer.Acked); r != 200 {
		t.Fatalf("rate = %v, want 200/s (12000 over 60 s)", r)
	}
	series := Series(snaps, PhaseMeasure)
	if len(series) != 6 {
		t.Fatalf("series has %d points, want 6", len(series))
	}
	for i, s := range series {
		if s.Index != i || s.Elapsed != 10*time.Second || s.Producer.Acked != 2000 || s.Workers != 2 {
			t.Errorf("point %d: index %d elapsed %v acked %d workers %d; want %d, 10s, 2000, 2", i, s.Index, s.Elapsed, s.Producer.Acked, s.Workers, i)
		}
	}
	if got := Phases(snaps); len(got) != 2 || got[0] != PhaseWarmup || got[1] != PhaseMeasure {
		t.Errorf("Phases = %v", got)
	}
	if m := Merge(snaps...); m.Phase != "" || !m.Start.Equal(t0) || !m.End.Equal(t0.Add(70*time.Second+30*time.Millisecond)) {
		t.Errorf("mixed merge: phase %q start %v end %v", m.Phase, m.Start, m.End)
	}
	if z := Merge(); z.Elapsed != 0 || z.Producer.PublishLatency.Count() != 0 {
		t.Errorf("empty merge not empty")
	}
}

func TestRecorderPhasesAndIndexes(t *testing.T) {
	rec := NewRecorder("w", PhaseWarmup, t0)
	rec.RecordPublishError()
	a := rec.Cut(t0.Add(10 * time.Second))
	b := rec.CutPhase(t0.Add(15*time.Second), PhaseMeasure)
	c := rec.Cut(t0.Add(25 * time.Second))
	d := rec.CutPhase(t0.Add(35*time.Second), PhaseMeasure)
	type want struct {
		phase Phase
		index int
		el    time.Duration
	}
	for i, tc := range []struct {
		got  Snapshot
		want want
	}{
		{a, want{PhaseWarmup, 0, 10 * time.Second}},
		{b, want{PhaseWarmup, 1, 5 * time.Second}},
		{c, want{PhaseMeasure, 0, 10 * time.Second}},
		{d, want{PhaseMeasure, 1, 10 * time.Second}},
	} {
		if tc.got.Phase != tc.want.phase || tc.got.Index != tc.want.index || tc.got.Elapsed != tc.want.el || tc.got.Worker != "w" {
			t.Errorf("cut %d: phase %q index %d elapsed %v, want %+v", i, tc.got.Phase, tc.got.Index, tc.got.Elapsed, tc.want)
		}
	}
	if a.Producer.PublishErrors != 1 || b.Producer.PublishErrors != 0 {
		t.Errorf("error counted in the wrong interval: %d, %d", a.Producer.PublishErrors, b.Producer.PublishErrors)
	}
	if rec.Phase() != PhaseMeasure {
		t.Errorf("Phase() = %q", rec.Phase())
	}
	if rec.Subscription("s", true) != rec.Subscription("s", false) {
		t.Errorf("Subscription returned two recorders for one name")
	}
	s := rec.Subscription("s", true)
	s.RecordReceive(t0, t0.Add(time.Millisecond), 10)
	s.RecordReceive(t0, t0.Add(time.Millisecond), 10)
	s.RecordDuplicates(1)
	s.RecordLost(3)
	e := rec.Cut(t0.Add(45 * time.Second))
	got := e.Consumer.Subscriptions["s"]
	if got != (Subscription{CatchUp: true, Received: 2, ReceivedBytes: 20, Duplicates: 1, Lost: 3}) {
		t.Errorf("subscription counts %+v", got)
	}
	if e.Consumer.CatchUpEndToEnd.Count() != 2 || e.Consumer.EndToEnd.Count() != 0 {
		t.Errorf("catch-up e2e went to the wrong histogram")
	}
}

// TestStoreRetryNeverLosesData is OMB issue #369: a transfer that fails after
// the worker answered must be repeatable with the same data.
func TestStoreRetryNeverLosesData(t *testing.T) {
	st := NewStore()
	for i := 0; i < 5; i++ {
		if seq := st.Append(Snapshot{Index: i}); seq != uint64(i+1) {
			t.Fatalf("Append #%d returned seq %d", i, seq)
		}
	}
	first := st.After(0)
	// The response is lost: the coordinator asks again from the same seq.
	again := st.After(0)
	if len(first) != 5 || len(again) != 5 {
		t.Fatalf("After(0) = %d then %d snapshots, want 5 and 5", len(first), len(again))
	}
	st.Ack(3)
	if got := st.After(3); len(got) != 2 || got[0].Seq != 4 || got[1].Seq != 5 {
		t.Fatalf("After(3) after Ack(3) = %+v", got)
	}
	// A stale coordinator asking from 1 gets what is left, not an error.
	if got := st.After(1); len(got) != 2 {
		t.Fatalf("After(1) after Ack(3) = %d snapshots, want the 2 kept", len(got))
	}
	st.Ack(2) // old ack again: harmless
	st.Ack(99)
	if st.Len() != 0 || st.AckedSeq() != 5 || st.LastSeq() != 5 {
		t.Fatalf("after Ack(99): len %d acked %d last %d", st.Len(), st.AckedSeq(), st.LastSeq())
	}
	if seq := st.Append(Snapshot{}); seq != 6 {
		t.Fatalf("seq after acks = %d, want 6 (numbers never reused)", seq)
	}
}

// TestStoreConcurrentAppendAndFetch fetches and acks while snapshots are
// appended; every Seq must arrive exactly once at the "coordinator".
func TestStoreConcurrentAppendAndFetch(t *testing.T) {
	st := NewStore()
	const n = 2000
	go func() {
		for i := 0; i < n; i++ {
			st.Append(Snapshot{Index: i})
		}
	}()
	var have uint64
	seen := 0
	for have < n {
		got := st.After(have)
		for _, s := range got {
			if s.Seq != have+1 {
				t.Fatalf("got seq %d after %d: gap or repeat", s.Seq, have)
			}
			have = s.Seq
			seen++
		}
		st.Ack(have)
	}
	if seen != n {
		t.Fatalf("coordinator saw %d snapshots, want %d", seen, n)
	}
}
