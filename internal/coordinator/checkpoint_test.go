package coordinator

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/worker"
)

// The coordinator hands its results so far to Checkpoint every interval
// (the cluster's coordinator writes them into the results ConfigMap), so a
// run killed midway keeps what it measured. Runs against the in-memory
// broker of memdriver_test.go: the checkpoints' content, not a broker's
// behaviour, is under test.
func TestCheckpointsCarryTheResultsSoFar(t *testing.T) {
	b := newMemBroker()
	urls := startWorkers(t, 2, map[v1alpha1.System]worker.DriverFactory{v1alpha1.SystemKafka: b.factory})
	var mu sync.Mutex
	var got []*Result
	res, err := Run(context.Background(), Options{
		Workers: urls, Driver: driver.Config{System: v1alpha1.SystemKafka, RunID: "memcheckpoint"},
		Workload: shortWorkload("checkpoint", 200, 4), SnapshotInterval: time.Second, Logf: t.Logf,
		CatchUpTimeout: 5 * time.Second,
		Checkpoint: func(r *Result) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, r)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) < 2 {
		t.Fatalf("%d checkpoints in a 6 s run with 1 s intervals; want several", len(got))
	}
	for i, cp := range got {
		if cp.RunID != res.RunID || len(cp.ClockOffsets) != 2 || len(cp.Workers) != 2 {
			t.Errorf("checkpoint %d: run %q, %d clock offsets, %d workers; want the run's", i, cp.RunID, len(cp.ClockOffsets), len(cp.Workers))
		}
		if i > 0 && len(cp.Snapshots) < len(got[i-1].Snapshots) {
			t.Errorf("checkpoint %d has %d snapshots, fewer than the one before (%d)", i, len(cp.Snapshots), len(got[i-1].Snapshots))
		}
		// A copy: what the run adds later must not change it.
		if len(cp.Snapshots) > len(res.Snapshots) {
			t.Errorf("checkpoint %d has %d snapshots, more than the whole run (%d)", i, len(cp.Snapshots), len(res.Snapshots))
		}
	}
	if last := got[len(got)-1]; len(last.Snapshots) == 0 {
		t.Error("the last checkpoint holds no snapshot")
	}
}

// A topic deletion that fails at the cleanup is tried again, in rounds,
// until it succeeds within DeleteRetry: the run ends without an error.
// Past DeleteRetry it is the run's error, naming the topics to delete.
func TestCleanupDeletesTheTopicsAgain(t *testing.T) {
	for _, c := range []struct {
		retry time.Duration
		ok    bool
	}{{20 * time.Second, true}, {time.Second, false}} {
		b := newMemBroker()
		// The worker answers a failed deletion with a 500, which the
		// client does not retry: each round is one deletion.
		b.failDeletes = 2
		urls := startWorkers(t, 1, map[v1alpha1.System]worker.DriverFactory{v1alpha1.SystemKafka: b.factory})
		_, err := Run(context.Background(), Options{
			Workers: urls, Driver: driver.Config{System: v1alpha1.SystemKafka, RunID: "memdelete"},
			Workload: shortWorkload("delete", 100, 1), SnapshotInterval: time.Second, Logf: t.Logf,
			CatchUpTimeout: 5 * time.Second, DeleteRetry: c.retry,
		})
		b.mu.Lock()
		deletes := b.deletes
		b.mu.Unlock()
		if c.ok && (err != nil || deletes != 3) {
			t.Errorf("retry %s: error %v after %d deletions; want none after 3", c.retry, err, deletes)
		}
		if !c.ok && (err == nil || !strings.Contains(err.Error(), "delete topics starting with memdelete by hand")) {
			t.Errorf("retry %s: error %v, want the deletion's, naming the topics", c.retry, err)
		}
	}
}

// A worker that goes mid-run (its pod deleted) ends the run within a few
// intervals, with that reason, not at the end of the measured phase.
func TestGoneWorkerEndsTheRun(t *testing.T) {
	b := newMemBroker()
	drivers := map[v1alpha1.System]worker.DriverFactory{v1alpha1.SystemKafka: b.factory}
	urls := startWorkers(t, 1, drivers)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	wctx, kill := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = worker.ServeListener(wctx, ln, worker.New(worker.Options{Name: "doomed", Drivers: drivers}))
	}()
	t.Cleanup(func() { kill(); <-done })
	urls = append(urls, "http://"+ln.Addr().String())

	// No warm-up: no phase command follows the start, so only the stats
	// reads meet the gone worker.
	wl := shortWorkload("gone", 200, 600)
	wl.WarmupDurationMinutes = f64(0)
	var once sync.Once
	// The measured phase (10 minutes) would outlast the test's own bound
	// (go test -timeout) by far: only the abort ends this run.
	_, err = Run(context.Background(), Options{
		Workers: urls, Driver: driver.Config{System: v1alpha1.SystemKafka, RunID: "memgone"},
		Workload: wl, SnapshotInterval: time.Second, Logf: t.Logf,
		CallTimeout: 2 * time.Second, Retries: 1,
		Checkpoint: func(*Result) { once.Do(func() { kill(); <-done }) },
	})
	if err == nil || !strings.Contains(err.Error(), "a worker is gone") || !strings.Contains(err.Error(), urls[1]) {
		t.Fatalf("run error %v; want the gone worker named as the reason", err)
	}
}
