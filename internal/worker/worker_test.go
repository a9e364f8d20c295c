package worker

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/metrics"
	"github.com/streambench/streambench-operator/internal/pace"
	"github.com/streambench/streambench-operator/internal/stats"
)

func f64(v float64) *float64 { return &v }
func i32(v int32) *int32     { return &v }

func TestHeaderRoundTrip(t *testing.T) {
	b := make([]byte, 100)
	h := Header{Probe: true, ProducerID: 7, Seq: 1<<40 + 3, SendMicros: 1_700_000_000_123_456, IntendedMicros: 1_700_000_000_000_001}
	h.Put(b)
	got, err := ParseHeader(b)
	if err != nil || got != h {
		t.Fatalf("got %+v, %v; want %+v", got, err, h)
	}
	if _, err := ParseHeader(make([]byte, 100)); err == nil {
		t.Error("a payload without the magic byte must be refused")
	}
	if _, err := ParseHeader(b[:HeaderSize-1]); err == nil {
		t.Error("a short payload must be refused")
	}
}

func TestPayloads(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	file := filepath.Join(dir, "p.bin")
	content := make([]byte, 200)
	for i := range content {
		content[i] = byte(i)
	}
	if err := os.WriteFile(file, content, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("payload file: exact size, header over the start, rest kept", func(t *testing.T) {
		p, err := NewPayloads(v1alpha1.WorkloadSpec{MessageSize: 200, PayloadFile: file}, rng)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, p.Size())
		p.Fill(buf, Header{ProducerID: 1, Seq: 2})
		if len(buf) != 200 {
			t.Fatalf("size %d", len(buf))
		}
		if h, err := ParseHeader(buf); err != nil || h.Seq != 2 {
			t.Fatalf("header %+v %v", h, err)
		}
		for i := HeaderSize; i < 200; i++ {
			if buf[i] != byte(i) {
				t.Fatalf("byte %d = %d, want the file's %d", i, buf[i], byte(i))
			}
		}
	})
	t.Run("a reused buffer gets each message's template and header", func(t *testing.T) {
		for _, pool := range []int32{1, 3} {
			ratio := 1.0
			p, err := NewPayloads(v1alpha1.WorkloadSpec{MessageSize: 64, RandomizedPayloadPoolSize: &pool, RandomBytesRatio: &ratio}, rng)
			if err != nil {
				t.Fatal(err)
			}
			fresh := p.Clone()
			// Two pooled buffers taking turns, one kept out once: the
			// templates they hold drift apart from the cursor's.
			bufs, used := [2][]byte{make([]byte, 64), make([]byte, 64)}, [2]bool{}
			for seq := uint64(0); seq < 20; seq++ {
				k := int(seq % 2)
				if seq == 7 {
					k = 0
				}
				want := make([]byte, 64)
				fresh.Fill(want, Header{ProducerID: 1, Seq: seq})
				p.Refill(bufs[k], !used[k], Header{ProducerID: 1, Seq: seq})
				used[k] = true
				if string(bufs[k]) != string(want) {
					t.Fatalf("pool of %d, message %d: the reused buffer differs from a freshly filled one", pool, seq)
				}
			}
		}
	})
	t.Run("payload file of the wrong size", func(t *testing.T) {
		if _, err := NewPayloads(v1alpha1.WorkloadSpec{MessageSize: 100, PayloadFile: file}, rng); err == nil {
			t.Fatal("want an error naming payloadFile and messageSize")
		}
	})
	t.Run("randomized: pool, random prefix, zero rest", func(t *testing.T) {
		p, err := NewPayloads(v1alpha1.WorkloadSpec{MessageSize: 1000, UseRandomizedPayloads: true,
			RandomBytesRatio: f64(0.5), RandomizedPayloadPoolSize: i32(4)}, rng)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.templates) != 4 {
			t.Fatalf("pool of %d, want 4", len(p.templates))
		}
		nonzero := 0
		for _, b := range p.templates[0][:500] {
			if b != 0 {
				nonzero++
			}
		}
		if nonzero < 400 {
			t.Errorf("random half has only %d non-zero bytes", nonzero)
		}
		for i, b := range p.templates[0][500:] {
			if b != 0 {
				t.Fatalf("byte %d of the zero half is %d", 500+i, b)
			}
		}
		if string(p.templates[0]) == string(p.templates[1]) {
			t.Error("pool payloads must differ")
		}
	})
	t.Run("message smaller than the header", func(t *testing.T) {
		if _, err := NewPayloads(v1alpha1.WorkloadSpec{MessageSize: HeaderSize - 1}, rng); err == nil {
			t.Fatal("want an error naming messageSize")
		}
	})
}

func TestKeyDistributors(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	none, _ := NewKeyDistributor(v1alpha1.KeyNone, rng)
	if none.Next() != nil {
		t.Error("NO_KEY must give nil keys")
	}
	rr, _ := NewKeyDistributor(v1alpha1.KeyRoundRobin, rng)
	first := string(rr.Next())
	if len(first) != 7 {
		t.Errorf("key length %d, want 7", len(first))
	}
	distinct := map[string]bool{first: true}
	for i := 1; i < keyPoolSize; i++ {
		distinct[string(rr.Next())] = true
	}
	if string(rr.Next()) != first {
		t.Error("KEY_ROUND_ROBIN must cycle after 10,000 keys")
	}
	if len(distinct) < keyPoolSize*99/100 {
		t.Errorf("only %d distinct keys of %d", len(distinct), keyPoolSize)
	}
	rn, _ := NewKeyDistributor(v1alpha1.KeyRandomNano, rng)
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		seen[string(rn.Next())] = true
	}
	if len(seen) < 900 {
		t.Errorf("RANDOM_NANO gave %d distinct keys in 1000 draws", len(seen))
	}
	if _, err := NewKeyDistributor("ROUND", rng); err == nil {
		t.Error("unknown distributor: want an error")
	}
}

func TestSeqSet(t *testing.T) {
	var a SeqSet
	for s := uint64(0); s < 1000; s++ {
		if s == 500 || s == 77 {
			continue
		}
		if a.Add(s) {
			t.Fatalf("seq %d reported duplicate", s)
		}
	}
	if !a.Add(10) {
		t.Error("second add of 10 must be a duplicate")
	}
	if a.Len() != 998 {
		t.Errorf("len %d, want 998", a.Len())
	}
	var failed77 SeqSet
	failed77.Add(77)
	if got := a.Missing(1000, &failed77); got != 1 {
		t.Errorf("missing %d, want 1 (500; 77 failed at send)", got)
	}
	if got := a.Missing(1010, nil); got != 12 {
		t.Errorf("missing %d, want 12", got)
	}
	data, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var b SeqSet
	if err := b.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if b.Len() != a.Len() || !b.Has(999) || b.Has(500) {
		t.Errorf("round trip: len %d, has 999 %v, has 500 %v", b.Len(), b.Has(999), b.Has(500))
	}
	var c SeqSet
	c.Add(500)
	c.Add(10)
	if ov := b.Union(&c); ov != 1 {
		t.Errorf("overlap %d, want 1 (seq 10)", ov)
	}
	if b.Missing(1000, &failed77) != 0 || b.Len() != 999 {
		t.Errorf("after union: missing %d len %d", b.Missing(1000, &failed77), b.Len())
	}
}

// TestSeqSetMissingAtEveryEdge compares Missing, which works a word at a
// time, with a count one sequence number at a time, around the words'
// edges and with the skip set longer or shorter than the set.
func TestSeqSetMissingAtEveryEdge(t *testing.T) {
	var got, skip SeqSet
	for s := uint64(0); s < 300; s++ {
		if s%7 != 0 {
			got.Add(s)
		}
		if s%7 == 0 && s%2 == 0 && s < 200 {
			skip.Add(s)
		}
	}
	for _, n := range []uint64{0, 1, 63, 64, 65, 127, 128, 129, 199, 200, 300, 301, 400, 1000} {
		var want int64
		for s := uint64(0); s < n; s++ {
			if !got.Has(s) && !skip.Has(s) {
				want++
			}
		}
		if m := got.Missing(n, &skip); m != want {
			t.Errorf("Missing(%d, skip) = %d, want %d", n, m, want)
		}
		var wantNoSkip int64
		for s := uint64(0); s < n; s++ {
			if !got.Has(s) {
				wantNoSkip++
			}
		}
		if m := got.Missing(n, nil); m != wantNoSkip {
			t.Errorf("Missing(%d, nil) = %d, want %d", n, m, wantNoSkip)
		}
	}
}

// TestPacerKeepsIntendedTimes: the intended times of a late sender do not
// slip, and a rate change continues the grid without a gap or a repeat.
func TestPacerKeepsIntendedTimes(t *testing.T) {
	s := newSchedule()
	s.set(1000) // 1 ms apart
	start := time.Now()
	p := newPacer(s, start, []float64{0})
	ctx := context.Background()
	var got []time.Time
	for i := 0; i < 5; i++ {
		it, _, ok := p.next(ctx)
		if !ok {
			t.Fatal("pacer stopped")
		}
		got = append(got, it)
		if i == 1 {
			time.Sleep(20 * time.Millisecond) // a slow send
		}
	}
	for i, it := range got {
		if want := start.Add(time.Duration(i) * time.Millisecond); !it.Equal(want) {
			t.Errorf("intended[%d] = +%v, want +%v", i, it.Sub(start), want.Sub(start))
		}
	}
	s.set(100) // 10 ms apart from the next point of the old grid
	it, _, _ := p.next(ctx)
	if want := start.Add(5 * time.Millisecond); !it.Equal(want) {
		t.Errorf("first after change +%v, want +5ms", it.Sub(start))
	}
	it, _, _ = p.next(ctx)
	if want := start.Add(15 * time.Millisecond); !it.Equal(want) {
		t.Errorf("second after change +%v, want +15ms", it.Sub(start))
	}
	cctx, cancel := context.WithCancel(ctx)
	s.set(0)
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	if _, _, ok := p.next(cctx); ok {
		t.Error("rate 0 must send nothing until the context ends")
	}
}

// TestPacersTakeTurns: a worker's producers are spread evenly over one
// producer's interval (as under OMB's one rate limiter per worker), also
// after a rate change and a pause, so N producers never send N messages at
// once, whether one sender serves them all or several share them.
func TestPacersTakeTurns(t *testing.T) {
	s := newSchedule()
	s.set(250) // each of 4 producers 4 ms apart: the worker 1 ms apart
	start := time.Now()
	p := newPacer(s, start, []float64{0, 0.25, 0.5, 0.75})
	ctx := context.Background()
	for k := 0; k < 8; k++ {
		it, turn, ok := p.next(ctx)
		if !ok {
			t.Fatal("pacer stopped")
		}
		if turn != k%4 {
			t.Errorf("send %d went to producer %d, want %d", k, turn, k%4)
		}
		if want := start.Add(time.Duration(k) * time.Millisecond); !it.Equal(want) {
			t.Errorf("send %d: +%v, want +%v", k, it.Sub(start), want.Sub(start))
		}
	}
	// Twice the rate: the old grid's next point (+8 ms, producer 0's turn)
	// comes first, then the turns go on 0.5 ms apart.
	s.set(500)
	for k := 0; k < 6; k++ {
		it, turn, _ := p.next(ctx)
		if want := 8*time.Millisecond + time.Duration(k)*500*time.Microsecond; it.Sub(start) != want || turn != k%4 {
			t.Errorf("send %d after the change: producer %d at +%v, want producer %d at +%v", k, turn, it.Sub(start), k%4, want)
		}
	}
	// After a pause (rate 0, as the rate search makes) the grid starts when
	// the rate comes back, at the first producer's turn, the next one a
	// quarter of an interval (1 ms at 250 msg/s) after it.
	s.set(0)
	resumed := make(chan time.Time, 1)
	go func() {
		time.Sleep(20 * time.Millisecond)
		resumed <- time.Now()
		s.set(250)
	}()
	first, turn, ok := p.next(ctx)
	if !ok {
		t.Fatal("pacer stopped")
	}
	at := <-resumed
	if turn != 0 || first.Before(at) {
		t.Errorf("after the pause producer %d sent at %v before the rate came back; want producer 0, not before", turn, at.Sub(first))
	}
	second, turn, _ := p.next(ctx)
	if turn != 1 || second.Sub(first) != time.Millisecond {
		t.Errorf("after the pause the second send is producer %d %v after the first, want producer 1, 1ms", turn, second.Sub(first))
	}
	// Two senders sharing 4 producers (i mod 2): each one's turns are its
	// producers' places, and together they are the one grid above.
	s.set(250)
	start = time.Now()
	a, b := newPacer(s, start, []float64{0, 0.5}), newPacer(s, start, []float64{0.25, 0.75})
	var times []time.Duration
	for range 2 {
		for _, p := range []*pacer{a, b} {
			for range 2 {
				it, _, _ := p.next(ctx)
				times = append(times, it.Sub(start))
			}
		}
	}
	slices.Sort(times)
	for k, got := range times {
		if want := time.Duration(k) * time.Millisecond; got != want {
			t.Errorf("two senders: send %d at +%v, want +%v", k, got, want)
		}
	}
}

// TestSenders: half the Ps send (at least one, at most one per producer),
// so a sender holding its P always leaves the clients as many.
func TestSenders(t *testing.T) {
	for _, c := range []struct{ producers, procs, want int }{
		{1, 2, 1}, {4, 2, 1}, {64, 2, 1}, {1, 1, 1}, {3, 1, 1}, {8, 8, 4}, {2, 8, 2}, {5, 3, 1},
	} {
		if got := senders(c.producers, c.procs); got != c.want {
			t.Errorf("senders(%d producers, %d Ps) = %d, want %d", c.producers, c.procs, got, c.want)
		}
	}
}

// TestPacerHoldingP: a pacer that sleeps holding its P (nanosleep for the
// last stretch, a Go timer before it) keeps the same grid, never hands out a
// time more than pace.EarlySend ahead of the clock, wakes at most once per
// pace.MinWake, and still stops when its context ends during a long wait.
func TestPacerHoldingP(t *testing.T) {
	for _, rate := range []float64{20000, 300} { // 50 µs apart; 3.3 ms apart (a coarse wait first)
		s := newSchedule()
		s.set(rate)
		start := time.Now().Add(time.Millisecond)
		p := newPacer(s, start, []float64{0})
		p.holdP = true
		n := int(rate / 20) // 50 ms of sends
		var wakes int
		last := time.Time{}
		for i := 0; i < n; i++ {
			it, _, ok := p.next(context.Background())
			if !ok {
				t.Fatal("pacer stopped")
			}
			now := time.Now()
			if want := start.Add(time.Duration(float64(i) * float64(time.Second) / rate)); !it.Equal(want) {
				t.Fatalf("rate %v: intended[%d] = +%v, want +%v", rate, i, it.Sub(start), want.Sub(start))
			}
			if early := it.Sub(now); early > pace.EarlySend {
				t.Errorf("rate %v: message %d handed out %v before its time", rate, i, early)
			}
			if !p.woke.Equal(last) {
				wakes++
				last = p.woke
			}
		}
		if most := int(50*time.Millisecond/pace.MinWake) + 2; rate == 20000 && wakes > most {
			t.Errorf("rate %v: %d precise wakes in 50 ms, want at most %d (one per %v)", rate, wakes, most, pace.MinWake)
		}
	}
	s := newSchedule()
	s.set(1) // one a second: the next wait is long
	p := newPacer(s, time.Now(), []float64{0})
	p.holdP = true
	ctx, cancel := context.WithCancel(context.Background())
	if _, _, ok := p.next(ctx); !ok {
		t.Fatal("the first message is due at once")
	}
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	begin := time.Now()
	if _, _, ok := p.next(ctx); ok {
		t.Error("a cancelled context must end the wait")
	}
	if waited := time.Since(begin); waited > 500*time.Millisecond {
		t.Errorf("the wait ended %v after it began; the cancel came after 20 ms", waited)
	}
}

// TestTickAfterPhaseChangeCutsNoSliver reproduces the phase-boundary
// race: the ticker fired just before the coordinator's phase change, and
// its tick is handled just after it. Cut, it made a sliver of the new
// phase's interval 0, so this worker's intervals ran one index ahead of
// the others' and the phase came out one interval long.
func TestTickAfterPhaseChangeCutsNoSliver(t *testing.T) {
	t0 := time.Now()
	r := &run{rec: stats.NewRecorder("w", stats.PhaseWarmup, t0), store: stats.NewStore(), interval: 10 * time.Second, metrics: metrics.New()}
	r.mu.Lock()
	r.cutPhaseLocked(t0.Add(25*time.Second), stats.PhaseMeasure) // the change
	r.mu.Unlock()
	r.onTick(t0.Add(25*time.Second + time.Millisecond)) // the tick that fired before it
	r.onTick(t0.Add(35 * time.Second))                  // the reset's tick
	r.onTick(t0.Add(45 * time.Second))
	var measure []stats.Snapshot
	for _, s := range r.store.After(0) {
		if s.Phase == stats.PhaseMeasure {
			measure = append(measure, s)
		}
	}
	if len(measure) != 2 {
		t.Fatalf("%d measure intervals, want 2 (the late tick cut nothing): %+v", len(measure), measure)
	}
	for i, s := range measure {
		if s.Index != i || s.Elapsed != 10*time.Second {
			t.Errorf("measure interval %d: index %d, %v long; want index %d, 10s", i, s.Index, s.Elapsed, i)
		}
	}
}

// TestTickAfterCutCutsNoSliver: a cut the coordinator asks for (a hold
// window of the rate search) is a boundary like a phase change: the tick
// that fired just before it cuts nothing, and the next interval is whole.
func TestTickAfterCutCutsNoSliver(t *testing.T) {
	t0 := time.Now()
	r := &run{rec: stats.NewRecorder("w", stats.PhaseRateSearch, t0), store: stats.NewStore(), interval: 10 * time.Second, metrics: metrics.New()}
	r.mu.Lock()
	r.cutLocked(t0.Add(25 * time.Second))
	r.mu.Unlock()
	r.onTick(t0.Add(25*time.Second + time.Millisecond)) // fired before the cut
	r.onTick(t0.Add(35 * time.Second))                  // the reset's tick
	snaps := r.store.After(0)
	if len(snaps) != 2 || snaps[1].Index != 1 || snaps[1].Elapsed != 10*time.Second {
		t.Fatalf("snapshots %+v: want the cut's (index 0) and one whole interval (index 1, 10 s)", snaps)
	}
}

// TestStartOnTheMonotonicClock: the load's start, a wall-clock instant
// from the coordinator, becomes a time with a monotonic reading, and the
// pacer's intended times keep it.
func TestStartOnTheMonotonicClock(t *testing.T) {
	wall := time.UnixMicro(time.Now().Add(50 * time.Millisecond).UnixMicro())
	if strings.Contains(wall.String(), "m=") {
		t.Fatal("time.UnixMicro has a monotonic reading; the test assumes it has none")
	}
	start := onMonotonic(wall)
	if !strings.Contains(start.String(), "m=") {
		t.Errorf("start %v has no monotonic reading", start)
	}
	if d := start.Sub(wall); d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("start is %v from the wall-clock instant, want the same instant", d)
	}
	s := newSchedule()
	s.set(1000)
	it, _, ok := newPacer(s, start, []float64{0}).next(context.Background())
	if !ok || !strings.Contains(it.String(), "m=") {
		t.Errorf("intended time %v: want a monotonic reading", it)
	}
}

func TestOutside(t *testing.T) {
	var a, b SeqSet
	for _, s := range []uint64{0, 1, 63, 64, 129} {
		a.Add(s)
	}
	b.Add(2)
	for _, n := range []uint64{0, 1, 3, 64, 65, 130, 200} {
		got := Outside(n, &a, &b, nil)
		var want int64
		for s := uint64(0); s < n; s++ {
			in := !a.Has(s) && !b.Has(s)
			if in {
				want++
			}
			if got.Has(s) != in {
				t.Errorf("n %d: Outside has %d = %v, want %v", n, s, got.Has(s), in)
			}
		}
		if got.Len() != want || got.Has(n) {
			t.Errorf("n %d: Outside has %d members (and %d: %v), want %d and not %d", n, got.Len(), n, got.Has(n), want, n)
		}
	}
}

// MissingRuns are exactly the numbers Missing counts, as maximal runs,
// across word boundaries and at n.
func TestMissingRuns(t *testing.T) {
	rg := func(from, to uint64) stats.SeqRange { return stats.SeqRange{From: from, To: to} }
	var got, skip SeqSet
	for s := uint64(0); s < 300; s++ {
		switch {
		case s >= 60 && s < 140, s == 5, s >= 250 && s < 256:
		case s == 7 || s == 200:
			skip.Add(s)
		default:
			got.Add(s)
		}
	}
	for _, tt := range []struct {
		n    uint64
		want []stats.SeqRange
	}{
		{0, nil},
		{5, nil},
		{6, []stats.SeqRange{rg(5, 6)}},
		{100, []stats.SeqRange{rg(5, 6), rg(60, 100)}},
		{300, []stats.SeqRange{rg(5, 6), rg(60, 140), rg(250, 256)}},
		// Past what was received: all missing.
		{330, []stats.SeqRange{rg(5, 6), rg(60, 140), rg(250, 256), rg(300, 330)}},
	} {
		runs := got.MissingRuns(tt.n, &skip)
		if !slices.Equal(runs, tt.want) {
			t.Errorf("n %d: runs %v, want %v", tt.n, runs, tt.want)
		}
		if c := stats.CountIn(runs, 0, tt.n); c != got.Missing(tt.n, &skip) {
			t.Errorf("n %d: runs hold %d, Missing counts %d", tt.n, c, got.Missing(tt.n, &skip))
		}
	}
	if c := stats.CountIn([]stats.SeqRange{rg(60, 140), rg(100, 120)}, 90, 110); c != 30 {
		t.Errorf("CountIn of overlapping runs: %d, want 20+10", c)
	}
}
