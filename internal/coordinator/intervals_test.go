package coordinator

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/stats"
	"github.com/streambench/streambench-operator/internal/worker"
)

// at is worker's snapshot of phase's interval index, closed at end (on the
// worker's clock).
func at(worker string, phase stats.Phase, index int, end time.Time) stats.Snapshot {
	s := snap(worker, phase, index, 100, 100, 2, 5)
	s.End, s.Start = end, end.Add(-10*time.Second)
	return s
}

func TestIntervalTrackerMergeLag(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tr := newIntervalTracker(3, 10*time.Second)

	// Two of three workers delivered interval 0: not merged, and the
	// third is the one to poll again.
	tr.add(0, []stats.Snapshot{at("a", stats.PhaseWarmup, 0, t0.Add(10*time.Second))}, 0)
	tr.add(1, []stats.Snapshot{at("b", stats.PhaseWarmup, 0, t0.Add(10*time.Second+20*time.Millisecond))}, 0)
	if got := tr.complete(t0.Add(10*time.Second + 150*time.Millisecond)); len(got) != 0 {
		t.Fatalf("merged an interval one worker had not delivered: %+v", got)
	}
	if got := tr.missing(); !reflect.DeepEqual(got, []int{2}) {
		t.Fatalf("missing %v, want [2]", got)
	}

	// The third worker's clock is 2 s ahead of the coordinator's: its end
	// is placed on the coordinator's clock before the lag is taken. A
	// snapshot delivered twice (a retried read) counts once.
	c := at("c", stats.PhaseWarmup, 0, t0.Add(12*time.Second+30*time.Millisecond))
	tr.add(2, []stats.Snapshot{c, c}, 2*time.Second)
	got := tr.complete(t0.Add(10*time.Second + 250*time.Millisecond))
	if len(got) != 1 {
		t.Fatalf("merged %d intervals, want warmup #0", len(got))
	}
	m := got[0]
	if m.Phase != stats.PhaseWarmup || m.Index != 0 || m.Merged.Workers != 3 || m.Merged.Producer.Acked != 300 {
		t.Errorf("merged %s #%d of %d workers, %d acked; want warmup #0 of 3 workers, 300 acked", m.Phase, m.Index, m.Merged.Workers, m.Merged.Producer.Acked)
	}
	// The interval ended when its last worker closed it (c, at 10.03 s on
	// the coordinator's clock); merged at 10.25 s.
	if want := 220 * time.Millisecond; m.Lag != want {
		t.Errorf("lag %s, want %s", m.Lag, want)
	}
	if len(tr.missing()) != 0 {
		t.Errorf("workers still owe %v after the interval was merged", tr.missing())
	}

	// A late merge (past the interval) is counted; a merge never has a
	// negative lag (a worker clock offset measured a little off).
	for w, name := range []string{"a", "b", "c"} {
		tr.add(w, []stats.Snapshot{at(name, stats.PhaseWarmup, 1, t0.Add(20*time.Second))}, 0)
	}
	tr.complete(t0.Add(31 * time.Second))
	for w, name := range []string{"a", "b", "c"} {
		tr.add(w, []stats.Snapshot{at(name, stats.PhaseMeasure, 0, t0.Add(32*time.Second))}, 0)
	}
	if got := tr.complete(t0.Add(31 * time.Second)); len(got) != 1 || got[0].Lag != 0 {
		t.Errorf("merge before its end (clock offset error): %+v, want lag 0", got)
	}
	sum := tr.summary()
	if sum.Merged != 3 || sum.Late != 1 || sum.MaxMergeLagSeconds != 11 || sum.Workers != 3 || sum.IntervalSeconds != 10 || sum.Incomplete != 0 {
		t.Errorf("summary %+v; want 3 merged, 1 late, max lag 11 s, 3 workers, interval 10 s", *sum)
	}
	if want := (220*time.Millisecond + 11*time.Second).Seconds() / 3; sum.MeanMergeLagSeconds < want-1e-9 || sum.MeanMergeLagSeconds > want+1e-9 {
		t.Errorf("mean lag %v, want %v", sum.MeanMergeLagSeconds, want)
	}
}

// A worker whose tick fell just before a phase change closes one interval
// more of the old phase than the others, which no other worker will ever
// deliver: once a later interval is merged it is given up, counted, and no
// worker is polled for it any more.
func TestIntervalTrackerGivesUpAnIntervalOthersNeverDeliver(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tr := newIntervalTracker(2, 10*time.Second)
	tr.add(0, []stats.Snapshot{at("a", stats.PhaseWarmup, 3, t0.Add(39990*time.Millisecond))}, 0)
	if got := tr.missing(); !reflect.DeepEqual(got, []int{1}) {
		t.Fatalf("missing %v, want [1]", got)
	}
	for w, name := range []string{"a", "b"} {
		tr.add(w, []stats.Snapshot{at(name, stats.PhaseMeasure, 0, t0.Add(50*time.Second))}, 0)
	}
	if got := tr.complete(t0.Add(50100 * time.Millisecond)); len(got) != 1 || got[0].Phase != stats.PhaseMeasure {
		t.Fatalf("merged %+v, want measure #0", got)
	}
	if got := tr.missing(); len(got) != 0 {
		t.Errorf("still polling %v for an interval given up", got)
	}
	if sum := tr.summary(); sum.Incomplete != 1 || sum.Merged != 1 {
		t.Errorf("summary %+v; want 1 merged, 1 incomplete", *sum)
	}
}

// The collector polls just after the workers' next boundary: an interval
// after the latest end it has seen, so an interval is merged a grace after
// it ends, never up to a whole interval later, also after a phase change
// restarted the workers' tickers off the old beat.
func TestIntervalTrackerNextPoll(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	iv := 10 * time.Second
	tests := []struct {
		name     string
		boundary time.Time // zero: none seen
		now      time.Time
		want     time.Time
	}{
		{"no boundary seen yet: an interval from now", time.Time{}, t0, t0.Add(iv)},
		{"just after a boundary", t0, t0.Add(100 * time.Millisecond), t0.Add(iv + pollGrace)},
		{"a phase change 3.7 s into an interval", t0.Add(3700 * time.Millisecond), t0.Add(3800 * time.Millisecond), t0.Add(3700*time.Millisecond + iv + pollGrace)},
		{"boundaries passed unpolled (a slow poll)", t0, t0.Add(25 * time.Second), t0.Add(3*iv + pollGrace)},
		{"exactly at the poll time: the next one", t0, t0.Add(iv + pollGrace), t0.Add(2*iv + pollGrace)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newIntervalTracker(1, iv)
			if !tt.boundary.IsZero() {
				tr.add(0, []stats.Snapshot{at("a", stats.PhaseMeasure, 0, tt.boundary)}, 0)
			}
			if got := tr.nextPoll(tt.now); !got.Equal(tt.want) {
				t.Errorf("next poll at %s, want %s", got.Sub(t0), tt.want.Sub(t0))
			}
		})
	}
}

// A run records how promptly it merged the workers' intervals, and its
// summary says so: every interval of the measured phase merged from every
// worker. (How fast is hack/bench-coordinator's to measure: a test must not
// fail because the machine is busy.)
func TestRunRecordsItsCollection(t *testing.T) {
	b := newMemBroker()
	urls := startWorkers(t, 4, map[v1alpha1.System]worker.DriverFactory{v1alpha1.SystemKafka: b.factory})
	res, err := Run(context.Background(), Options{
		Workers: urls, Driver: driver.Config{System: v1alpha1.SystemKafka, RunID: "memcollection"},
		Workload: shortWorkload("collection", 200, 3), SnapshotInterval: time.Second, Logf: t.Logf,
		CatchUpTimeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	col := res.Collection
	if col == nil {
		t.Fatal("the result has no collection record")
	}
	measured := len(stats.Series(res.Snapshots, stats.PhaseMeasure))
	if col.Workers != 4 || col.IntervalSeconds != 1 || col.Merged < measured || col.MaxMergeLagSeconds < col.MeanMergeLagSeconds {
		t.Errorf("collection %+v; want 4 workers, 1 s intervals, at least the %d measured intervals merged, max lag >= mean", *col, measured)
	}
	sum, err := WriteFiles(t.TempDir(), res.ResultsInput("collection", "", nil))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Collection == nil || *sum.Collection != *col {
		t.Errorf("summary's collection %+v, want the run's %+v", sum.Collection, *col)
	}
}
